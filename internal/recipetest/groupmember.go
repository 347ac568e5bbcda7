package recipetest

import "testing"

// groupMemberSource is the Java side of StartGroupMember: Curator's
// GroupMember (a PersistentNode in EPHEMERAL mode plus a CuratorCache of the
// group), driven over stdin. Lines:
//
//	ID join PATH MEMBER DATA   start a GroupMember; answers "ID joined"
//	ID set DATA                setThisData; answers "ID set"
//	ID members                 answers "ID members a=x,b=y" (sorted by id)
//	ID leave                   close; answers "ID left"
//
// DATA "-" means empty data.
const groupMemberSource = `
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.util.*;
import java.util.concurrent.*;
import org.apache.curator.framework.*;
import org.apache.curator.framework.recipes.nodes.GroupMember;
import org.apache.curator.retry.RetryOneTime;

public class GroupMemberPeer {
    static final Map<String, GroupMember> members = new ConcurrentHashMap<>();
    static synchronized void out(String s) { System.out.println(s); System.out.flush(); }
    static byte[] bytes(String s) { return s.equals("-") ? new byte[0] : s.getBytes(StandardCharsets.UTF_8); }
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
                switch (op) {
                    case "join": {
                        GroupMember m = new GroupMember(c, f[2], f[3], bytes(f[4]));
                        m.start();
                        members.put(id, m);
                        out(id + " joined");
                        break;
                    }
                    case "set": members.get(id).setThisData(bytes(f[2])); out(id + " set"); break;
                    case "members": {
                        TreeMap<String, String> sorted = new TreeMap<>();
                        for (Map.Entry<String, byte[]> e : members.get(id).getCurrentMembers().entrySet())
                            sorted.put(e.getKey(), new String(e.getValue(), StandardCharsets.UTF_8));
                        StringBuilder b = new StringBuilder();
                        for (Map.Entry<String, String> e : sorted.entrySet()) {
                            if (b.length() > 0) b.append(',');
                            b.append(e.getKey()).append('=').append(e.getValue());
                        }
                        out(id + " members " + b);
                        break;
                    }
                    case "leave": members.remove(id).close(); out(id + " left"); break;
                    default: out(id + " error unknown op " + op);
                }
            } catch (Exception e) {
                out(id + " error " + e);
            }
        }
        for (GroupMember m : members.values()) m.close();
        c.close();
    }
}
`

// StartGroupMember starts a Java process with Curator GroupMembers on
// servers, driven with the lines described in groupMemberSource ("ID join
// PATH MEMBER DATA", "ID set DATA", "ID members", "ID leave"). It skips
// like StartCurator when Curator is missing.
func StartGroupMember(t *testing.T, servers []string) *CuratorPeer {
	t.Helper()
	return StartJava(t, "GroupMemberPeer", groupMemberSource, servers)
}
