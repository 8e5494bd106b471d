package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"

	"github.com/webpilot/webpilot/api"
)

// cacheCmd lists or clears the tenant's step cache.
func cacheCmd(c *client, args []string, out io.Writer) error {
	if len(args) == 0 || (args[0] != "list" && args[0] != "clear") {
		return errors.New("usage: webpilot cache list|clear [--origin URL]")
	}
	fs := flag.NewFlagSet("cache "+args[0], flag.ContinueOnError)
	origin := fs.String("origin", "", "only the entries of this app (scheme://host[:port])")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	key, err := tenantKey()
	if err != nil {
		return err
	}
	q := ""
	if *origin != "" {
		q = "?origin=" + url.QueryEscape(*origin)
	}
	if args[0] == "clear" {
		var res struct{ Deleted int64 }
		if err := c.do("DELETE", "/v1/step-cache"+q, key, nil, &res); err != nil {
			return err
		}
		fmt.Fprintf(out, "cleared %d cached steps\n", res.Deleted)
		return nil
	}
	var res struct{ Entries []api.StepCacheView }
	if err := c.do("GET", "/v1/step-cache"+q, key, nil, &res); err != nil {
		return err
	}
	for _, e := range res.Entries {
		fmt.Fprintf(out, "%s%s  %q  %d commands, used %d times\n", e.Origin, e.Path, e.Step, e.Commands, e.Hits)
	}
	fmt.Fprintf(out, "%d cached steps\n", len(res.Entries))
	return nil
}
