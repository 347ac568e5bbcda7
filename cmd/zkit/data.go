package main

import (
	"io"
	"os"

	"github.com/zkit-dev/zkit/client"
)

// nodeData is the data set and create write: DATA, the argument (nil
// when there is none); standard input when DATA is "-"; or the content of
// --file. Any byte may be in it, NUL included. It is read up to the most
// that a node at path takes under ZooKeeper's default jute.maxbuffer, and
// more is a usage error before anything is sent: a request over the limit
// would only make the server drop the connection.
func (a *app) nodeData(path string, args []string, file string) ([]byte, error) {
	if len(args) > 0 && file != "" {
		return nil, usagef("DATA and --file exclude each other: give the data once")
	}
	root, err := a.chroot()
	if err != nil {
		return nil, err
	}
	limit := client.MaxData(root + path)
	var data []byte
	from := "DATA"
	switch {
	case file != "":
		from = "--file " + file
		f, err := os.Open(file)
		if err != nil {
			return nil, usagef("--file: %v", err)
		}
		defer f.Close()
		if data, err = readAtMost(f, limit); err != nil {
			return nil, usagef("--file: %v", err)
		}
	case len(args) > 0 && args[0] == "-":
		from = "standard input"
		if data, err = readAtMost(a.stdin, limit); err != nil {
			return nil, usagef("reading standard input: %v", err)
		}
	case len(args) > 0:
		data = []byte(args[0])
	}
	if len(data) > limit {
		return nil, usagef("%s: more than %d bytes, the most a node at %s takes (ZooKeeper's jute.maxbuffer, %d, less the request's own bytes); nothing sent",
			from, limit, path, client.DefaultMaxBuffer)
	}
	return data, nil
}

// readAtMost reads r to its end, but no more than limit+1 bytes: enough
// to tell that it holds more than limit.
func readAtMost(r io.Reader, limit int) ([]byte, error) {
	return io.ReadAll(io.LimitReader(r, int64(limit)+1))
}
