package config

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Healthcheck asks the /healthz of a process listening on addr (a listen
// address such as 0.0.0.0:8080: it is asked on the loopback) and returns
// the exit code for a container's HEALTHCHECK: 0 when it answers 200.
func Healthcheck(addr string) int {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		fmt.Println("healthcheck: no listen address to ask:", addr)
		return 1
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+net.JoinHostPort(host, port)+"/healthz", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Println("healthcheck:", err)
		return 1
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Println("healthcheck: /healthz answered", resp.Status)
		return 1
	}
	return 0
}
