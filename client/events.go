package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Event is one server-sent event of a job's stream: its name (state,
// step, test, finding, end) and its JSON data.
type Event struct {
	Name string
	Data json.RawMessage
}

// ErrStreamEnded is a job's event stream that ended before the job did
// (the dispatcher restarted, a proxy cut it): follow it again.
var ErrStreamEnded = errors.New("the event stream ended before the job did")

// Events follows a job's events (GET /v1/jobs/{id}/events) and calls fn
// with each, up to and including the "end" event, after which it returns
// nil. An error of fn stops it and is returned; a stream that ends
// without "end" is ErrStreamEnded, or the read's error wrapping it.
func (c *Client) Events(ctx context.Context, id string, fn func(Event) error) error {
	path := "/v1/jobs/" + url.PathEscape(id) + "/events"
	resp, err := c.send(ctx, http.MethodGet, path, nil, http.Header{"Accept": {"text/event-stream"}})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return answerError(resp, raw)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	name := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if err := fn(Event{Name: name, Data: json.RawMessage(strings.TrimPrefix(line, "data: "))}); err != nil {
				return err
			}
			if name == "end" {
				return nil
			}
		}
	}
	if err := sc.Err(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: %w", ErrStreamEnded, err)
	}
	return ErrStreamEnded
}
