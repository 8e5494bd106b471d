package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ConnectConfig says how a binary reaches the job queue.
type ConnectConfig struct {
	// URL is the NATS server, or several of one cluster separated by
	// commas; empty means the single-machine one: the
	// embedded server on 127.0.0.1:Port, started by whoever has Embed.
	URL string
	// Token, Creds and CA authenticate the client (see ClientOptions). With
	// no URL and no Token, the embedded server's token in DataDir is used.
	Token, Creds, CA string
	Port             int
	DataDir          string
	// Embed starts the embedded server when URL is empty (the dispatcher
	// does; a worker connects to it).
	Embed bool
	// Manage creates or updates the stream and its consumer (the
	// dispatcher does); otherwise they are only found and checked, so
	// processes configured differently never undo each other's settings.
	Manage bool
	// Name is the client's name on the server.
	Name  string
	Queue QueueConfig
	// Logger reports the embedded server and the waits for the queue.
	Logger *slog.Logger
}

// Connection is a binary's link to the job queue: the connection, its
// JetStream context and the JOBS stream's consumer.
type Connection struct {
	Conn     *nats.Conn
	JS       jetstream.JetStream
	Consumer jetstream.Consumer
	URL      string
	embedded *server.Server
}

// Connect reaches the queue as cfg says, starting the embedded server if
// it is this binary's to start, and waits (until ctx ends) for the stream
// to be there: a binary may start before its NATS server does.
func Connect(ctx context.Context, cfg ConnectConfig) (*Connection, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	c := &Connection{URL: cfg.URL}
	token := cfg.Token
	if c.URL == "" && token == "" {
		var err error
		if token, err = EmbeddedToken(cfg.DataDir); err != nil {
			return nil, err
		}
	}
	if c.URL == "" {
		if cfg.Embed {
			ns, err := StartEmbedded(filepath.Join(cfg.DataDir, "nats"), cfg.Port, token)
			if err != nil {
				return nil, err
			}
			c.embedded = ns
			c.URL = ns.ClientURL()
			log.Info("embedded NATS JetStream started", "url", c.URL)
		} else {
			c.URL = fmt.Sprintf("nats://127.0.0.1:%d", cfg.Port)
		}
	}
	nc, err := nats.Connect(c.URL, append(ClientOptions(token, cfg.Creds, cfg.CA),
		nats.Name(cfg.Name), nats.MaxReconnects(-1), nats.RetryOnFailedConnect(true))...)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("connect to NATS %s: %w", c.URL, err)
	}
	c.Conn = nc
	if c.JS, err = jetstream.New(nc); err != nil {
		c.Close()
		return nil, err
	}
	for {
		ensure := BindQueue
		if cfg.Manage {
			ensure = EnsureQueue
		}
		if c.Consumer, err = ensure(ctx, c.JS, cfg.Queue); err == nil {
			return c, nil
		}
		if errors.Is(err, ErrQueueMismatch) || ctx.Err() != nil {
			c.Close()
			return nil, err
		}
		log.Info("waiting for NATS", "url", c.URL, "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// Close drains the connection (what was published is sent) and then stops
// the embedded server, if this binary started it.
func (c *Connection) Close() {
	if c.Conn != nil {
		_ = c.Conn.Drain()
		// What was published is flushed at once; a subscription still
		// draining is not waited for past a moment.
		for deadline := time.Now().Add(2 * time.Second); c.Conn.IsDraining() && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if c.embedded != nil {
		c.embedded.Shutdown()
	}
}
