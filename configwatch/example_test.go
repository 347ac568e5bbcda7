package configwatch_test

import (
	"context"
	"fmt"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/configwatch"
	"github.com/zkit-dev/zkit/zktest"
)

// A service follows its configuration while an operator publishes it.
func ExampleConfig_Watch() {
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

	type AppConfig struct {
		Workers int    `json:"workers"`
		DB      string `json:"db"`
	}
	// The operator publishes a whole configuration.
	first, _ := configwatch.Encode(AppConfig{Workers: 4, DB: "primary"})
	if _, err := configwatch.New(c, "/app/config", configwatch.Raw).Publish(ctx, first); err != nil {
		fmt.Println(err)
		return
	}

	cfg := configwatch.New(c, "/app/config", configwatch.JSON[AppConfig])
	feed := cfg.Watch(ctx)
	snap := <-feed.Values()
	fmt.Printf("%+v\n", snap.Value)

	zxid, err := cfg.Set(ctx, configwatch.Values{"workers": []byte("8")})
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

// Get reads the configuration once; Raw keeps the values as stored, and
// WithAtomic publishes them in one transaction.
func ExampleConfig_Get() {
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

	raw := configwatch.New(c, "/app/config", configwatch.Raw, configwatch.WithAtomic())
	vals := configwatch.Values{"region": []byte(`"eu-west"`), "replicas": []byte("3")}
	if _, err := raw.Publish(ctx, vals); err != nil {
		fmt.Println(err)
		return
	}
	snap, err := raw.Get(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	doc, _ := configwatch.Document(snap.Value)
	fmt.Println(string(doc))
	// Output:
	// {"region":"eu-west","replicas":3}
}
