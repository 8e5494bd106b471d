package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"

	"github.com/webpilot/webpilot/client"
)

// cacheCmd lists or clears the tenant's step cache.
func cacheCmd(c *conn, action, origin string, out io.Writer, asJSON bool) error {
	key, err := tenantKey()
	if err != nil {
		return err
	}
	q := ""
	if origin != "" {
		q = "?origin=" + url.QueryEscape(origin)
	}
	var raw string
	method := "GET"
	if action == "clear" {
		method = "DELETE"
	}
	if err := c.do(method, "/v1/step-cache"+q, key, nil, &raw); err != nil {
		return err
	}
	if asJSON {
		printRaw(out, raw)
		return nil
	}
	if action == "clear" {
		var res struct{ Deleted int64 }
		if err := json.Unmarshal([]byte(raw), &res); err != nil {
			return err
		}
		fmt.Fprintf(out, "cleared %d cached steps\n", res.Deleted)
		return nil
	}
	var res struct{ Entries []client.StepCacheView }
	if err := json.Unmarshal([]byte(raw), &res); err != nil {
		return err
	}
	for _, e := range res.Entries {
		fmt.Fprintf(out, "%s%s  %q  %d commands, used %d times\n", e.Origin, e.Path, e.Step, e.Commands, e.Hits)
	}
	fmt.Fprintf(out, "%d cached steps\n", len(res.Entries))
	return nil
}
