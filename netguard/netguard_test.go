package netguard

import "testing"

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
	}
	for _, tc := range tests {
		err := p.CheckURL(tc.url)
		if (err == nil) != tc.ok {
			t.Errorf("CheckURL(%q) = %v, want ok=%v", tc.url, err, tc.ok)
		}
	}
}
