package jobs_test

import (
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/webpilot/webpilot/internal/jobs"
)

func TestEmbeddedServerRefusesClientsWithoutItsToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	token, err := jobs.EmbeddedToken(dir)
	if err != nil || token == "" {
		t.Fatalf("token: %q %v", token, err)
	}
	if again, _ := jobs.EmbeddedToken(dir); again != token {
		t.Fatal("a second process would get another token")
	}
	ns, err := jobs.StartEmbedded(t.TempDir(), 0, token)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Shutdown)
	if host := ns.Addr().String(); host[:10] != "127.0.0.1:" {
		t.Fatalf("embedded NATS listens on %s, want loopback only", host)
	}
	for name, opts := range map[string][]nats.Option{"no token": nil, "wrong token": {nats.Token("guess")}} {
		if nc, err := nats.Connect(ns.ClientURL(), opts...); err == nil {
			nc.Close()
			t.Fatalf("a client with %s connected", name)
		}
	}
	nc, err := nats.Connect(ns.ClientURL(), jobs.ClientOptions(token, "", "")...)
	if err != nil {
		t.Fatalf("the token holder could not connect: %v", err)
	}
	nc.Close()
	if _, err := jobs.StartEmbedded(t.TempDir(), 0, ""); err == nil {
		t.Fatal("an embedded server without a token was started")
	}
}
