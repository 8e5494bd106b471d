// Package webhook sends tenants' events to their webhooks. Deliveries are
// written by the store in the transaction that ends a job (the outbox of
// events); a Deliverer claims the due ones, signs each attempt and posts
// it through the egress guard, and records every attempt, retrying with
// backoff until the receiver answers 2xx or the attempts run out: each
// event reaches its receiver at least once, and its id says when it is a
// repeat.
//
// # Signatures
//
// Every request carries
//
//	Webpilot-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>
//
// signed with the webhook's own secret at the moment it is sent. A receiver
// recomputes the HMAC over the timestamp, a dot and the raw body, compares
// in constant time, and refuses a timestamp outside its window (Verify uses
// five minutes) so that a captured request cannot be replayed later.
package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Header names of a delivery's request.
const (
	SignatureHeader = "Webpilot-Signature"
	EventHeader     = "Webpilot-Event"
	DeliveryHeader  = "Webpilot-Delivery"
)

// Tolerance is how far a signature's timestamp may be from the receiver's
// clock before Verify refuses it as a replay.
const Tolerance = 5 * time.Minute

// Errors Verify answers with.
var (
	ErrNoSignature   = errors.New("webhook: no signature")
	ErrBadSignature  = errors.New("webhook: the signature does not match the body")
	ErrOutsideWindow = errors.New("webhook: the signature's timestamp is outside the window (a replay?)")
)

// NewSecret makes a webhook's signing secret: 32 random bytes, printable.
func NewSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("webhook secret: %w", err)
	}
	return "whsec_" + base64.RawURLEncoding.EncodeToString(b), nil
}

func mac(secret string, ts int64, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(m, "%d.", ts)
	m.Write(body)
	return m.Sum(nil)
}

// Sign is the Webpilot-Signature value of body sent at t.
func Sign(secret string, t time.Time, body []byte) string {
	ts := t.Unix()
	return fmt.Sprintf("t=%d,v1=%s", ts, hex.EncodeToString(mac(secret, ts, body)))
}

// Verify checks a Webpilot-Signature header against body as a receiver
// should: the HMAC of any v1 value matches, and the timestamp is within
// tolerance of now.
func Verify(secret, header string, body []byte, tolerance time.Duration, now time.Time) error {
	var ts int64
	var sigs [][]byte
	for _, part := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			continue
		}
		switch k {
		case "t":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return fmt.Errorf("%w: bad timestamp %q", ErrBadSignature, v)
			}
			ts = n
		case "v1":
			if b, err := hex.DecodeString(v); err == nil {
				sigs = append(sigs, b)
			}
		}
	}
	if ts == 0 || len(sigs) == 0 {
		return ErrNoSignature
	}
	want := mac(secret, ts, body)
	ok := false
	for _, s := range sigs {
		if hmac.Equal(s, want) {
			ok = true
		}
	}
	if !ok {
		return ErrBadSignature
	}
	if d := now.Sub(time.Unix(ts, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: signed %s from now", ErrOutsideWindow, d.Round(time.Second))
	}
	return nil
}
