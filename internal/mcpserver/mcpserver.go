// Package mcpserver serves webpilot's browser engine to outside AI clients
// over the Model Context Protocol (stdio or Streamable HTTP), through the
// official Go SDK: the client takes the model's part, sending whole
// batches of the agent's commands (execute_sequence) and reading back what
// each did and what changed, in one round trip.
package mcpserver

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webpilot/webpilot/internal/browser"
	"github.com/webpilot/webpilot/internal/orchestrator"
)

// Conn is one client's browser session: an orchestrator.Session on this
// machine, or one on the platform's workers.
type Conn interface {
	Navigate(ctx context.Context, url string, view bool) (orchestrator.SequenceResult, error)
	View(ctx context.Context) (string, error)
	Sequence(ctx context.Context, cmds []browser.Command, o orchestrator.SequenceOptions) (orchestrator.SequenceResult, error)
	Spec() (string, error)
	Dialogs() []browser.Dialog
	Pages() []browser.PageInfo
	Screenshot(fullPage bool) ([]byte, error)
	Close() error
}

// Backend opens the sessions the tools act on, and runs whole scenarios.
type Backend interface {
	// Open opens a browser session for one MCP session.
	Open(ctx context.Context) (Conn, error)
	// Run runs a scenario to its end as a job does, calling progress
	// with each step as it finishes.
	Run(ctx context.Context, in RunInput, progress func(StepProgress)) (RunResult, error)
}

// Options configure a server.
type Options struct {
	Backend Backend
	// Version is the server's version as clients see it.
	Version string
	Log     *slog.Logger
	// SessionTimeout closes an HTTP session idle this long (and its browser).
	SessionTimeout time.Duration
}

// Server hands each MCP session its own browser session.
type Server struct {
	opts    Options
	schemas *mcp.SchemaCache // the tools' schemas resolved once for every session
}

// New returns a server.
func New(opts Options) *Server {
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	if opts.SessionTimeout == 0 {
		opts.SessionTimeout = 30 * time.Minute
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	return &Server{opts: opts, schemas: mcp.NewSchemaCache()}
}

// protocolVersions are the versions served: those with sessions, since a
// session holds its browser from one call to the next.
var protocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26"}

// session is one MCP session's state: its browser, opened at the first
// call that needs one.
type session struct {
	backend Backend
	log     *slog.Logger
	mu      sync.Mutex
	conn    Conn
	closed  bool
}

func (s *session) open(ctx context.Context) (Conn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("the session has ended")
	}
	if s.conn == nil {
		c, err := s.backend.Open(ctx)
		if err != nil {
			return nil, err
		}
		s.conn = c
	}
	return s.conn, nil
}

func (s *session) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.conn != nil {
		if err := s.conn.Close(); err != nil {
			s.log.Warn("browser session not closed", "err", err)
		}
		s.conn = nil
	}
}

// newMCPServer builds the SDK server of one MCP session over backend and
// returns it with the session's state.
func (s *Server) newMCPServer(backend Backend) (*mcp.Server, *session) {
	st := &session{backend: backend, log: s.opts.Log}
	srv := mcp.NewServer(&mcp.Implementation{Name: "webpilot", Version: s.opts.Version}, &mcp.ServerOptions{
		Instructions:              instructions,
		Logger:                    s.opts.Log,
		SupportedProtocolVersions: protocolVersions,
		SchemaCache:               s.schemas,
		InitializedHandler: func(_ context.Context, req *mcp.InitializedRequest) {
			// The browser goes when the session does.
			go func() {
				_ = req.Session.Wait()
				st.close()
			}()
		},
	})
	addTools(srv, st)
	return srv, st
}

// ServeStdio serves one session over stdin and stdout until the client
// leaves or ctx ends.
func (s *Server) ServeStdio(ctx context.Context) error {
	srv, st := s.newMCPServer(s.opts.Backend)
	defer st.close()
	err := srv.Run(ctx, &mcp.StdioTransport{})
	if errors.Is(err, context.Canceled) || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil
	}
	return err
}

// Handler serves Streamable HTTP: each MCP session (Mcp-Session-Id) its
// own browser session.
func (s *Server) Handler() http.Handler {
	return s.HandlerFor(func(*http.Request) Backend { return s.opts.Backend })
}

// HandlerFor is Handler with each new MCP session's backend chosen by the
// request that opens it (a tenant's, on the platform).
func (s *Server) HandlerFor(backend func(*http.Request) Backend) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		srv, _ := s.newMCPServer(backend(r))
		return srv
	}, &mcp.StreamableHTTPOptions{Logger: s.opts.Log, SessionTimeout: s.opts.SessionTimeout})
}

const instructions = `webpilot drives a real Chromium for you. Start with navigate (the first one opens the browser and is the test's start), read the page view (snapshot, or view:true on any call) and act with execute_sequence: several commands in one call, run in order, stopping at the first that fails, the page settled once at the end; the answer says what each command did and what changed on the page, in the view's own terms. Target elements by the ref of a view line ({"ref":"s1e12"}) or as a test would (role and name, label, placeholder, text, test_id). verify checks the page without acting. spec writes the @playwright/test file of everything done so far. Secrets are typed as {{NAME}} and never shown.`
