package ensemble

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
)

// maxAnswer bounds what is read of a four-letter word's or the admin
// server's answer: mntr's is a few kilobytes.
const maxAnswer = 1 << 20

// fourLetterWord sends word to the server at addr, on a connection of its
// own (with TLS when cfg is not nil), and returns the server's answer: all
// it sends before it closes the connection.
func fourLetterWord(ctx context.Context, addr, word string, cfg *tls.Config) (string, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer nc.Close()
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	defer stop()
	if cfg != nil {
		host, _, _ := net.SplitHostPort(addr)
		cfg = cfg.Clone()
		if cfg.ServerName == "" {
			cfg.ServerName = host
		}
		nc = tls.Client(nc, cfg)
	}
	if _, err := io.WriteString(nc, word); err != nil {
		return "", fmt.Errorf("%s: %w", word, contextErr(ctx, err))
	}
	b, err := io.ReadAll(io.LimitReader(nc, maxAnswer))
	if err != nil {
		return "", fmt.Errorf("%s: %w", word, contextErr(ctx, err))
	}
	if len(b) == 0 {
		return "", fmt.Errorf("%s: the server closed the connection without an answer", word)
	}
	return string(b), nil
}

// contextErr is ctx's error when it ended, which closed the connection,
// else err.
func contextErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// parseSrvr reads srvr's answer: "Name: value" lines.
func parseSrvr(out string) (mode string, s *Stats, err error) {
	fields := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok {
			fields[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	mode = fields["Mode"]
	if mode == "" {
		first, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
		return "", nil, fmt.Errorf("srvr: no Mode in the answer %q", first)
	}
	s = &Stats{}
	s.Version, _, _ = strings.Cut(fields["Zookeeper version"], ",") // "3.8.4-..., built on ..."
	var errs []error
	num := func(name string) int64 {
		n, err := strconv.ParseInt(fields[name], 10, 64)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %q", name, fields[name]))
		}
		return n
	}
	s.Outstanding, s.Connections = num("Outstanding"), num("Connections")
	zxid, err := strconv.ParseInt(strings.TrimPrefix(fields["Zxid"], "0x"), 16, 64)
	if err != nil {
		errs = append(errs, fmt.Errorf("Zxid %q", fields["Zxid"]))
	}
	s.Zxid = zxid
	lat := strings.Split(fields["Latency min/avg/max"], "/")
	if len(lat) != 3 {
		errs = append(errs, fmt.Errorf("Latency min/avg/max %q", fields["Latency min/avg/max"]))
	} else {
		for i, p := range []*float64{&s.Latency.Min, &s.Latency.Avg, &s.Latency.Max} {
			if *p, err = strconv.ParseFloat(lat[i], 64); err != nil {
				errs = append(errs, fmt.Errorf("Latency %q", lat[i]))
			}
		}
	}
	if len(errs) > 0 {
		return "", nil, fmt.Errorf("srvr: unreadable %w", errors.Join(errs...))
	}
	return mode, s, nil
}

// mntrField reads a number from mntr's answer: "name\tvalue" lines.
func mntrField(out, name string) (int64, error) {
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, name+"\t"); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("mntr: no %s in the answer", name)
}

// adminWatchCount reads the watch count from the admin server at addr:
// its monitor command (mntr), in JSON.
func adminWatchCount(ctx context.Context, addr string) (int64, error) {
	url := "http://" + addr + "/commands/mntr"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	rsp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer rsp.Body.Close()
	if rsp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%s: %s", url, rsp.Status)
	}
	var m struct {
		Watches *int64  `json:"watch_count"`
		Error   *string `json:"error"`
	}
	if err := json.NewDecoder(io.LimitReader(rsp.Body, maxAnswer)).Decode(&m); err != nil {
		return 0, fmt.Errorf("%s: %w", url, err)
	}
	switch {
	case m.Error != nil:
		return 0, fmt.Errorf("%s: %s", url, *m.Error)
	case m.Watches == nil:
		return 0, fmt.Errorf("%s: no watch_count", url)
	}
	return *m.Watches, nil
}
