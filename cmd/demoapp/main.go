// Command demoapp serves the bundled demo web app on 127.0.0.1.
package main

import (
	"flag"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/webpilot/webpilot/internal/demoapp"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8090", "listen address")
	shopBugs := flag.Bool("shop-bugs", true, "serve the shop (/shop/) with its seeded bugs")
	zooBugs := flag.Bool("zoo-bugs", true, "serve the zoo (/zoo/) with its seeded defects")
	variant := flag.String("variant", "", "serve a changed release of the app: comma-separated changes (renamed_ids, reworded, wrong_count, ...)")
	flag.Parse()
	slog.Info("demo app listening", "url", "http://"+*addr, "shop_bugs", *shopBugs)
	app := demoapp.New(demoapp.Options{})
	app.SetShopBugs(*shopBugs)
	app.SetZooBugs(*zooBugs)
	if *variant != "" {
		var changes []demoapp.Variation
		for _, c := range strings.Split(*variant, ",") {
			changes = append(changes, demoapp.Variation(strings.TrimSpace(c)))
		}
		if err := app.SetVariant(changes...); err != nil {
			slog.Error("bad -variant", "err", err, "known", demoapp.Variations)
			os.Exit(2)
		}
		slog.Info("serving a changed release", "changes", changes)
	}
	srv := &http.Server{Addr: *addr, Handler: app, ReadHeaderTimeout: 5 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		slog.Error("demo app stopped", "err", err)
		os.Exit(1)
	}
}
