package recipetest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkit-dev/zkit/zktest"
)

// discoverySource is the Java side of StartDiscovery: Curator's
// ServiceDiscovery and ServiceProvider (x-discovery), driven over stdin.
// Payloads are objects of the class DiscoveryPeer$Details. Lines:
//
//	ID start BASE                       a ServiceDiscovery<Object> on BASE, started; "ID started"
//	ID register NAME INST ADDR PORT SSL SPEC ZONE WEIGHT
//	                                    registerService of an instance built with Curator's
//	                                    builder (payload Details(ZONE, WEIGHT)); "ID registered"
//	ID unregister                       unregisterService of ID's instance; "ID unregistered"
//	ID names                            "ID names a,b" (queryForNames, sorted)
//	ID instances NAME                   "ID instances [json,...]" (queryForInstances, sorted by
//	                                    id, each written by JsonInstanceSerializer with "enabled")
//	ID uri NAME INST                    "ID uri URI" (buildUriSpec of queryForInstance; - if none)
//	ID payload NAME INST                "ID payload CLASS VALUE" (VALUE ZONE/WEIGHT for Details)
//	ID provider NAME STRATEGY           a started ServiceProvider (roundrobin, random, sticky);
//	                                    "ID provider"
//	ID pick                             "ID picked INST" (getInstance; - if none)
//	ID all                              "ID all a,b" (getAllInstances' ids, sorted)
//	ID session                          "ID session HEXID HEXPASSWORD" (the process's session)
//	ID close                            close ID's discovery (unregistering its instance); "ID closed"
//
// A "-" stands for null (ADDR, PORT, SSL, SPEC; ZONE: no payload). Errors
// answer "ID error ...".
const discoverySource = `
import java.io.*;
import java.util.*;
import java.util.concurrent.*;
import org.apache.curator.framework.*;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.x.discovery.*;
import org.apache.curator.x.discovery.details.JsonInstanceSerializer;
import org.apache.curator.x.discovery.strategies.*;

public class DiscoveryPeer {
    public static class Details {
        public String zone;
        public int weight;
        public Details() {}
        public Details(String zone, int weight) { this.zone = zone; this.weight = weight; }
        @Override public boolean equals(Object o) {
            return o instanceof Details && Objects.equals(zone, ((Details) o).zone) && weight == ((Details) o).weight;
        }
        @Override public int hashCode() { return Objects.hash(zone, weight); }
    }
    static final Map<String, ServiceDiscovery<Object>> discoveries = new ConcurrentHashMap<>();
    static final Map<String, ServiceInstance<Object>> instances = new ConcurrentHashMap<>();
    static final Map<String, ServiceProvider<Object>> providers = new ConcurrentHashMap<>();
    static final JsonInstanceSerializer<Object> full = new JsonInstanceSerializer<>(Object.class, false);
    static synchronized void out(String s) { System.out.println(s); System.out.flush(); }
    static String nul(String s) { return s.equals("-") ? null : s; }
    static String ids(Collection<ServiceInstance<Object>> all) {
        TreeSet<String> ids = new TreeSet<>();
        for (ServiceInstance<Object> i : all) ids.add(i.getId());
        return String.join(",", ids);
    }
    public static void main(String[] args) throws Exception {
        CuratorFramework c = CuratorFrameworkFactory.newClient(args[0], 30000, 15000, new RetryOneTime(100));
        c.start();
        c.blockUntilConnected();
        out("ready");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.trim().split(" ");
            String id = f[0], op = f[1];
            try {
                ServiceDiscovery<Object> d = discoveries.get(id);
                switch (op) {
                    case "start": {
                        d = ServiceDiscoveryBuilder.builder(Object.class).client(c).basePath(f[2]).build();
                        d.start();
                        discoveries.put(id, d);
                        out(id + " started");
                        break;
                    }
                    case "register": {
                        ServiceInstanceBuilder<Object> b = ServiceInstance.builder();
                        b.name(f[2]).id(f[3]).address(nul(f[4]));
                        if (nul(f[5]) != null) b.port(Integer.parseInt(f[5]));
                        if (nul(f[6]) != null) b.sslPort(Integer.parseInt(f[6]));
                        if (nul(f[7]) != null) b.uriSpec(new UriSpec(f[7]));
                        if (nul(f[8]) != null) b.payload(new Details(f[8], Integer.parseInt(f[9])));
                        ServiceInstance<Object> i = b.build();
                        d.registerService(i);
                        instances.put(id, i);
                        out(id + " registered");
                        break;
                    }
                    case "unregister": d.unregisterService(instances.remove(id)); out(id + " unregistered"); break;
                    case "names": {
                        TreeSet<String> names = new TreeSet<>(d.queryForNames());
                        out(id + " names " + String.join(",", names));
                        break;
                    }
                    case "instances": {
                        TreeMap<String, ServiceInstance<Object>> sorted = new TreeMap<>();
                        for (ServiceInstance<Object> i : d.queryForInstances(f[2])) sorted.put(i.getId(), i);
                        StringBuilder sb = new StringBuilder("[");
                        for (ServiceInstance<Object> i : sorted.values()) {
                            if (sb.length() > 1) sb.append(',');
                            sb.append(new String(full.serialize(i), "UTF-8"));
                        }
                        out(id + " instances " + sb.append(']'));
                        break;
                    }
                    case "uri": {
                        ServiceInstance<Object> i = d.queryForInstance(f[2], f[3]);
                        out(id + " uri " + (i == null ? "-" : i.buildUriSpec()));
                        break;
                    }
                    case "payload": {
                        ServiceInstance<Object> i = d.queryForInstance(f[2], f[3]);
                        Object p = i == null ? null : i.getPayload();
                        String v = p instanceof Details ? ((Details) p).zone + "/" + ((Details) p).weight : String.valueOf(p);
                        out(id + " payload " + (p == null ? "-" : p.getClass().getName()) + " " + v);
                        break;
                    }
                    case "provider": {
                        ProviderStrategy<Object> s = f[3].equals("random") ? new RandomStrategy<>()
                            : f[3].equals("sticky") ? new StickyStrategy<>(new RoundRobinStrategy<>())
                            : new RoundRobinStrategy<>();
                        ServiceProvider<Object> p = d.serviceProviderBuilder().serviceName(f[2]).providerStrategy(s).build();
                        p.start();
                        providers.put(id, p);
                        out(id + " provider");
                        break;
                    }
                    case "pick": {
                        ServiceInstance<Object> i = providers.get(id).getInstance();
                        out(id + " picked " + (i == null ? "-" : i.getId()));
                        break;
                    }
                    case "all": out(id + " all " + ids(providers.get(id).getAllInstances())); break;
                    case "session": {
                        org.apache.zookeeper.ZooKeeper zk = c.getZookeeperClient().getZooKeeper();
                        StringBuilder pw = new StringBuilder();
                        for (byte x : zk.getSessionPasswd()) pw.append(String.format("%02x", x));
                        out(id + " session " + Long.toHexString(zk.getSessionId()) + " " + pw);
                        break;
                    }
                    case "close": {
                        ServiceProvider<Object> p = providers.remove(id);
                        if (p != null) p.close();
                        discoveries.remove(id).close();
                        out(id + " closed");
                        break;
                    }
                    default: out(id + " error unknown op " + op);
                }
            } catch (Exception e) {
                out(id + " error " + e.toString().replace('\n', ' '));
            }
        }
        for (ServiceProvider<Object> p : providers.values()) p.close();
        for (ServiceDiscovery<Object> d : discoveries.values()) d.close();
        c.close();
    }
}
`

// discoveryJars are what Curator's x-discovery needs beside the jars of
// Curator's recipes.
var discoveryJars = []string{"curator-x-discovery", "jackson-databind", "jackson-core", "jackson-annotations"}

// StartDiscovery starts a Java process with Curator's ServiceDiscovery and
// ServiceProvider on servers, driven with the lines described in
// discoverySource ("ID start BASE", "ID register ...", "ID instances NAME",
// "ID provider NAME STRATEGY", "ID pick", ...). Its payloads are objects of
// the Java class DiscoveryPeerDetails names. It skips like StartCurator
// when Curator or its discovery jars are missing, unless
// ZKIT_REQUIRE_ZOOKEEPER is set.
func StartDiscovery(t *testing.T, servers []string) *CuratorPeer {
	t.Helper()
	var cp []string
	for _, j := range discoveryJars {
		p := filepath.Join("/usr/share/java", j+".jar")
		if _, err := os.Stat(p); err != nil {
			skip := fmt.Sprintf("%s missing (apt-get install libcurator-discovery-java)", p)
			switch strings.ToLower(os.Getenv(zktest.RequireZooKeeperEnv)) {
			case "1", "true", "yes":
				t.Fatalf("Curator discovery interop: %s (%s is set)", skip, zktest.RequireZooKeeperEnv)
			}
			t.Skipf("skipping Curator discovery interop: %s", skip)
		}
		cp = append(cp, p)
	}
	return startJava(t, "DiscoveryPeer", discoverySource, strings.Join(cp, ":"), servers)
}

// DiscoveryPeerDetails is the Java class of the discovery peer's payloads
// (fields zone, a string, and weight, an int), by its binary name.
const DiscoveryPeerDetails = "DiscoveryPeer$Details"
