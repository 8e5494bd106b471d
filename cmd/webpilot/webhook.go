package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"github.com/webpilot/webpilot/client"
)

// webhookCommand manages the tenant's webhooks: where its events go, and
// what came of each delivery.
func webhookCommand(g *globals, out io.Writer) *cobra.Command {
	w := &cobra.Command{Use: "webhook", Short: "Send your events (job.finished, project.repaired, regression.found) to a URL, signed"}
	var events []string
	add := &cobra.Command{Use: "add URL", Short: "Add a webhook; prints its signing secret once", Args: cobra.ExactArgs(1),
		Example: "  webpilot webhook add https://ci.example/hooks/webpilot --event project.repaired --event regression.found",
		RunE: func(cmd *cobra.Command, args []string) error {
			req := client.WebhookRequest{URL: args[0]}
			for _, e := range events {
				req.Events = append(req.Events, client.WebhookEvent(e))
			}
			var v client.WebhookCreated
			if err := tenantDo(g, "POST", "/v1/webhooks", req, &v); err != nil {
				return err
			}
			if g.json {
				return printJSON(out, v)
			}
			fmt.Fprintf(out, "webhook %s: %s for %s\nsigning secret (shown once, keep it): %s\n", v.ID, v.URL, eventList(v.Events), v.Secret)
			return nil
		}}
	add.Flags().StringSliceVar(&events, "event", []string{string(client.EventJobFinished)}, "an event to send (repeatable): "+strings.Join(eventNames(), ", "))
	var limit int
	deliveries := &cobra.Command{Use: "deliveries ID", Short: "A webhook's deliveries, newest first, with every attempt", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var l client.DeliveryList
			if err := tenantDo(g, "GET", fmt.Sprintf("/v1/webhooks/%s/deliveries?limit=%d", url.PathEscape(args[0]), limit), nil, &l); err != nil {
				return err
			}
			if g.json {
				return printJSON(out, l)
			}
			for _, d := range l.Deliveries {
				fmt.Fprintf(out, "%s  %-17s %-9s job %s  %s\n", d.CreatedAt.Format("2006-01-02 15:04:05"), d.Event, d.State, d.JobID, d.ID)
				for _, a := range d.Attempts {
					what := fmt.Sprintf("HTTP %d", a.Status)
					if a.Error != "" {
						what = a.Error
					}
					fmt.Fprintf(out, "    attempt %d at %s: %s (%d ms)\n", a.N, a.At.Format("15:04:05"), what, a.DurationMS)
				}
			}
			return nil
		}}
	deliveries.Flags().IntVar(&limit, "limit", 20, "at most this many deliveries")
	w.AddCommand(add, deliveries,
		&cobra.Command{Use: "list", Short: "Your webhooks", Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) error {
				var l client.WebhookList
				if err := tenantDo(g, "GET", "/v1/webhooks", nil, &l); err != nil {
					return err
				}
				if g.json {
					return printJSON(out, l)
				}
				for _, h := range l.Webhooks {
					fmt.Fprintf(out, "%s  %s  %s\n", h.ID, h.URL, eventList(h.Events))
				}
				return nil
			}},
		&cobra.Command{Use: "delete ID", Short: "Stop a webhook (its pending deliveries are dropped)", Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				var d client.Deleted
				if err := tenantDo(g, "DELETE", "/v1/webhooks/"+url.PathEscape(args[0]), nil, &d); err != nil {
					return err
				}
				fmt.Fprintf(out, "deleted webhook %s\n", args[0])
				return nil
			}},
	)
	return w
}

// tenantDo is one API call with the tenant's key.
func tenantDo(g *globals, method, path string, body, into any) error {
	key, err := tenantKey()
	if err != nil {
		return err
	}
	return g.conn().do(method, path, key, body, into)
}

func printJSON(out io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, string(b))
	return nil
}

func eventNames() []string {
	var out []string
	for _, e := range client.AllWebhookEvents {
		out = append(out, string(e))
	}
	return out
}

func eventList(es []client.WebhookEvent) string {
	var out []string
	for _, e := range es {
		out = append(out, string(e))
	}
	return strings.Join(out, ", ")
}
