package configwatch_test

import (
	"context"
	"fmt"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/configwatch"
	"github.com/zkit-dev/zkit/zktest"
)

// A service follows its configuration while an operator publishes it.
func ExampleWatch() {
	srv, err := zktest.StartServer("127.0.0.1:0") // the bundled reference server
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

	type Config struct {
		Workers int    `json:"workers"`
		DB      string `json:"db"`
	}
	// The operator: a whole configuration, then one key.
	first, _ := configwatch.Encode(Config{Workers: 4, DB: "primary"})
	if _, err := configwatch.Publish(ctx, c, "/app/config", first); err != nil {
		fmt.Println(err)
		return
	}
	feed := configwatch.Watch[Config](ctx, c, "/app/config", nil)
	snap := <-feed.Values()
	fmt.Printf("%+v\n", snap.Value)

	zxid, err := configwatch.Set(ctx, c, "/app/config", configwatch.Values{"workers": []byte("8")})
	if err != nil {
		fmt.Println(err)
		return
	}
	snap = <-feed.Values()
	fmt.Printf("%+v (the publish's zxid: %v)\n", snap.Value, snap.Zxid == zxid)
	// Output:
	// {Workers:4 DB:primary}
	// {Workers:8 DB:primary} (the publish's zxid: true)
}

// Get reads the configuration once; Raw keeps the stored values.
func ExampleGet() {
	srv, err := zktest.StartServer("127.0.0.1:0")
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

	vals := configwatch.Values{"region": []byte(`"eu-west"`), "replicas": []byte("3")}
	if _, err := configwatch.Publish(ctx, c, "/app/config", vals, configwatch.Atomic()); err != nil {
		fmt.Println(err)
		return
	}
	snap, err := configwatch.Get(ctx, c, "/app/config", configwatch.Raw)
	if err != nil {
		fmt.Println(err)
		return
	}
	doc, _ := configwatch.Document(snap.Value)
	fmt.Println(string(doc))
	// Output:
	// {"region":"eu-west","replicas":3}
}
