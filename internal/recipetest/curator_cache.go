package recipetest

import (
	"encoding/base64"
	"strings"
	"testing"
)

// cacheSource is the Java side of StartCuratorCache: Curator's CuratorCache
// (5.4) on one path, whose content is dumped on request.
const cacheSource = `
import java.io.*;
import java.util.*;
import org.apache.curator.framework.*;
import org.apache.curator.framework.recipes.cache.*;
import org.apache.curator.retry.RetryOneTime;

public class CachePeer {
    static synchronized void out(String s) { System.out.println(s); System.out.flush(); }
    public static void main(String[] args) throws Exception {
        CuratorFramework c = CuratorFrameworkFactory.newClient(args[0], 30000, 15000, new RetryOneTime(100));
        c.start();
        c.blockUntilConnected();
        out("ready");
        CuratorCache cache = null;
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.trim().split(" ");
            switch (f[0]) {
                case "open":
                    cache = CuratorCache.build(c, f[1]);
                    cache.listenable().addListener(CuratorCacheListener.builder().forInitialized(() -> out("initialized")).build());
                    cache.start();
                    break;
                case "dump":
                    StringBuilder b = new StringBuilder();
                    List<ChildData> nodes = new ArrayList<>();
                    cache.stream().forEach(nodes::add);
                    for (ChildData d : nodes) {
                        byte[] data = d.getData();
                        b.append("node ").append(d.getPath()).append(" ")
                         .append(data == null ? "-" : Base64.getEncoder().encodeToString(data)).append("\n");
                    }
                    b.append("end");
                    out(b.toString());
                    break;
                default:
                    out("error unknown op " + f[0]);
            }
        }
        if (cache != null) cache.close();
        c.close();
    }
}
`

// CuratorCachePeer is a Java process with a Curator CuratorCache.
type CuratorCachePeer struct {
	p *CuratorPeer
}

// StartCuratorCache starts a CuratorCache on path in a Java process
// connected to servers, and returns once it is initialized. It skips the
// test like StartCurator.
func StartCuratorCache(t *testing.T, servers []string, path string) *CuratorCachePeer {
	t.Helper()
	p := StartJava(t, "CachePeer", cacheSource, servers)
	p.Send("open %s", path)
	p.Expect("initialized")
	return &CuratorCachePeer{p}
}

// Dump returns the cache's nodes: path to data.
func (c *CuratorCachePeer) Dump() map[string][]byte {
	c.p.t.Helper()
	c.p.Send("dump")
	nodes := map[string][]byte{}
	for {
		line := c.p.Next()
		if line == "end" {
			return nodes
		}
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "node" {
			c.p.t.Fatalf("curator cache peer said %q", line)
		}
		var data []byte
		if f[2] != "-" {
			var err error
			if data, err = base64.StdEncoding.DecodeString(f[2]); err != nil {
				c.p.t.Fatalf("curator cache peer: %q: %v", line, err)
			}
		}
		nodes[f[1]] = data
	}
}
