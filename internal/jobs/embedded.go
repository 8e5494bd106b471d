package jobs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// StartEmbedded starts an in-process NATS server with JetStream storing under
// dir, listening on 127.0.0.1 only (port 0 picks a free one), that accepts
// only clients presenting token (see EmbeddedToken). Used when NATS_URL is
// unset: on one machine and in tests.
func StartEmbedded(dir string, port int, token string) (*server.Server, error) {
	if port == 0 {
		port = -1
	}
	if token == "" {
		return nil, errors.New("embedded nats: a client token is required")
	}
	ns, err := server.NewServer(&server.Options{
		ServerName:    "webpilot-embedded",
		Host:          "127.0.0.1",
		Port:          port,
		JetStream:     true,
		StoreDir:      dir,
		NoSigs:        true,
		NoLog:         true,
		Authorization: token,
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

// EmbeddedToken returns the client token of the embedded server kept in
// dataDir/nats.token (mode 0600), generating it on first use, so that the
// dispatcher and the workers of one machine share it and nobody else on
// the machine can use the queue.
func EmbeddedToken(dataDir string) (string, error) {
	path := filepath.Join(dataDir, "nats.token")
	if b, err := os.ReadFile(path); err == nil {
		if tok := strings.TrimSpace(string(b)); tok != "" {
			return tok, nil
		}
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return "", fmt.Errorf("create data dir: %w", err)
	}
	raw := make([]byte, 24)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	tok := hex.EncodeToString(raw)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		b, rerr := os.ReadFile(path) // another process wrote it first
		return strings.TrimSpace(string(b)), rerr
	}
	if err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	_, err = f.WriteString(tok)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return tok, err
}

// NewToken returns a random client token (tests, drills).
func NewToken() string {
	raw := make([]byte, 16)
	_, _ = rand.Read(raw)
	return hex.EncodeToString(raw)
}

// ClientOptions are the connection options for a NATS cluster: a token
// (the embedded server's, or an external server's), a credentials file
// (NATS accounts with NKeys/JWT) and a CA file for tls:// URLs. Empty
// values are left out.
func ClientOptions(token, credsFile, caFile string) []nats.Option {
	var opts []nats.Option
	if token != "" {
		opts = append(opts, nats.Token(token))
	}
	if credsFile != "" {
		opts = append(opts, nats.UserCredentials(credsFile))
	}
	if caFile != "" {
		opts = append(opts, nats.RootCAs(caFile))
	}
	return opts
}
