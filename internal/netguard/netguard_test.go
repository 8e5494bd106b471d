package netguard

import (
	"context"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
)

func TestCheckURL(t *testing.T) {
	t.Parallel()
	p := New([]string{"127.0.0.1", "intranet.example:8443"})
	tests := []struct {
		url string
		ok  bool
	}{
		{"http://127.0.0.1:8080/login", true},     // allow-listed
		{"https://intranet.example:8443/x", true}, // allow-listed with port
		{"http://127.0.0.2/", false},              // loopback, not listed
		{"http://169.254.169.254/latest/meta-data", false},
		{"http://10.1.2.3/", false},
		{"http://192.168.1.1/", false},
		{"http://[::1]/", false},
		{"http://[fe80::1]/", false},
		{"http://[::ffff:10.0.0.1]/", false},
		{"http://localhost/", false},
		{"file:///etc/passwd", false},
		{"javascript:alert(1)", false},
		{"ftp://8.8.8.8/", false},
		{"http://8.8.8.8/", true},
		{"http:///nohost", false},
		// Zoned and IPv4-embedding IPv6 forms of refused addresses.
		{"http://[fe80::1%25eth0]/", false},
		{"http://[::ffff:127.0.0.1]/", false},
		{"http://[::ffff:0:7f00:1]/", false},     // IPv4-translated
		{"http://[::127.0.0.1]/", false},         // IPv4-compatible
		{"http://[64:ff9b::a9fe:a9fe]/", false},  // NAT64 of 169.254.169.254
		{"http://[64:ff9b:1::a00:1]/", false},    // local-use NAT64
		{"http://[2002:7f00:1::]/", false},       // 6to4 of 127.0.0.1
		{"http://[2001:0:4136:e378::1]/", false}, // Teredo
		{"http://[fec0::1]/", false},             // site-local
		{"http://[2606:4700:4700::1111]/", true}, // a public IPv6 address
		{"http://0.0.0.0:8080/", false},
		{"http://192.0.2.1/", false},
	}
	for _, tc := range tests {
		err := p.CheckURL(tc.url)
		if (err == nil) != tc.ok {
			t.Errorf("CheckURL(%q) = %v, want ok=%v", tc.url, err, tc.ok)
		}
	}
}

// TestARefusedNameDoesNotSayWhereItLeads: a name refused for resolving to
// a private or loopback address is refused without the address, which
// would map the host's network for whoever submits names.
func TestARefusedNameDoesNotSayWhereItLeads(t *testing.T) {
	t.Parallel()
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	addrs, err := net.DefaultResolver.LookupNetIP(context.Background(), "ip", host)
	if err != nil || !slices.ContainsFunc(addrs, BlockedAddr) {
		t.Skipf("this machine's name %s resolves to no refused address (%v %v)", host, addrs, err)
	}
	p := New(nil)
	for what, err := range map[string]error{"CheckURL": p.CheckURL("http://" + host + ":8080/"), "the proxy": func() error {
		_, err := p.DialAddrs(context.Background(), host, "8080")
		return err
	}()} {
		if err == nil {
			t.Fatalf("%s let %s through", what, host)
		}
		for _, a := range addrs {
			if strings.Contains(err.Error(), a.Unmap().String()) {
				t.Errorf("%s: %q names the address", what, err)
			}
		}
	}
}
