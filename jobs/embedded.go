package jobs

import (
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// StartEmbedded starts an in-process NATS server with JetStream storing under
// dir, listening on 127.0.0.1 (port 0 picks a free one). Used when NATS_URL is
// unset: on one machine and in tests.
func StartEmbedded(dir string, port int) (*server.Server, error) {
	if port == 0 {
		port = -1
	}
	ns, err := server.NewServer(&server.Options{
		ServerName: "webpilot-embedded",
		Host:       "127.0.0.1",
		Port:       port,
		JetStream:  true,
		StoreDir:   dir,
		NoSigs:     true,
		NoLog:      true,
	})
	if err != nil {
		return nil, fmt.Errorf("create embedded nats: %w", err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		return nil, fmt.Errorf("embedded nats did not become ready")
	}
	return ns, nil
}
