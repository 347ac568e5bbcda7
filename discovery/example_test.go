package discovery_test

import (
	"context"
	"fmt"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/discovery"
	"github.com/zkit-dev/zkit/zktest"
)

func Example() {
	srv, err := zktest.StartServer("127.0.0.1:0") // the bundled reference server
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ctx := context.Background()
	c, err := client.Connect(ctx, srv.Servers())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	services := discovery.New(c, "/services")
	// Curator's ServiceDiscovery on /services finds these instances, and
	// zkit finds the instances Java services register there.
	a, err := services.Register(ctx, discovery.Instance{Name: "api", ID: "api-1", Address: "10.0.0.1", Port: 8080})
	if err != nil {
		fmt.Println(err)
		return
	}
	b, err := services.Register(ctx, discovery.Instance{Name: "api", ID: "api-2", Address: "10.0.0.2", Port: 8080})
	if err != nil {
		fmt.Println(err)
		return
	}

	// A provider picks from a live view of the service, in turn.
	provider := services.Provider(ctx, "api")
	for range 3 {
		inst, err := provider.Pick(ctx)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("call %s:%d\n", inst.Address, inst.Port)
	}

	b.Unregister(ctx)
	left, _ := services.Instances(ctx, "api")
	fmt.Println("after unregister:", len(left), "instance,", left[0].ID)
	fmt.Println("registered:", a.Err() == nil)
	// Output:
	// call 10.0.0.1:8080
	// call 10.0.0.2:8080
	// call 10.0.0.1:8080
	// after unregister: 1 instance, api-1
	// registered: true
}

// The URI of an instance, from the template Curator's UriSpec holds.
func ExampleInstance_URI() {
	spec, err := discovery.ParseURISpec("{scheme}://{address}:{port}/{path}")
	if err != nil {
		fmt.Println(err)
		return
	}
	inst := discovery.Instance{Name: "api", ID: "api-1", Address: "10.0.0.1", Port: 8080, URISpec: spec}
	fmt.Println(inst.URI(map[string]string{"path": "v1"}))
	// Output:
	// http://10.0.0.1:8080/v1
}

// A payload that a Java service reads as an object of its own class.
func ExampleJavaPayload() {
	type details struct {
		Zone string `json:"zone"`
	}
	payload, err := discovery.JavaPayload("com.example.InstanceDetails", details{Zone: "eu-1"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(payload))
	// Output:
	// {"@class":"com.example.InstanceDetails","zone":"eu-1"}
}

// Watch delivers every instance of a service whenever one changes; the
// last snapshot is the current set.
func ExampleDiscovery_Watch() {
	srv, err := zktest.StartServer("127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := client.Connect(ctx, srv.Servers())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	services := discovery.New(c, "/services")
	feed := services.Watch(ctx, "api")
	fmt.Println("instances:", len(<-feed.Values()))
	if _, err := services.Register(ctx, discovery.Instance{Name: "api", ID: "api-1", Address: "10.0.0.1"}); err != nil {
		fmt.Println(err)
		return
	}
	for instances := range feed.Values() {
		if len(instances) == 1 {
			fmt.Println("registered:", instances[0].ID, instances[0].Path)
			break
		}
	}
	// Output:
	// instances: 0
	// registered: api-1 /services/api/api-1
}
