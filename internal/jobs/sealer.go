package jobs

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Sealer encrypts secrets (AES-256-GCM) so that a job's test-data secrets and
// browser storage state are never stored in the clear.
type Sealer struct {
	aead cipher.AEAD
}

// NewSealer takes a 32-byte key.
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("sealing key must be 32 bytes, got %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("create cipher: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("create gcm: %w", err)
	}
	return &Sealer{aead: aead}, nil
}

// ParseSealingKey decodes a base64 key as given in WEBPILOT_SECRET_KEY.
func ParseSealingKey(b64 string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, fmt.Errorf("WEBPILOT_SECRET_KEY is not base64: %w", err)
	}
	return key, nil
}

// Seal encrypts plaintext; the associated data binds it to its use (a job id).
func (s *Sealer) Seal(plaintext []byte, associated string) (string, error) {
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("nonce: %w", err)
	}
	out := s.aead.Seal(nonce, nonce, plaintext, []byte(associated))
	return base64.RawStdEncoding.EncodeToString(out), nil
}

// Open decrypts what Seal produced with the same associated data.
func (s *Sealer) Open(sealed, associated string) ([]byte, error) {
	raw, err := base64.RawStdEncoding.DecodeString(sealed)
	if err != nil {
		return nil, fmt.Errorf("sealed value is not base64: %w", err)
	}
	n := s.aead.NonceSize()
	if len(raw) < n {
		return nil, errors.New("sealed value is too short")
	}
	plain, err := s.aead.Open(nil, raw[:n], raw[n:], []byte(associated))
	if err != nil {
		return nil, fmt.Errorf("open sealed value (wrong key?): %w", err)
	}
	return plain, nil
}

// LoadSealer uses key (base64 of 32 bytes, WEBPILOT_SECRET_KEY) when set.
// On a single machine without it, the key lives in dataDir/secret.key
// (created with mode 0600 on first use) so the dispatcher and workers
// share it.
func LoadSealer(encoded, dataDir string) (*Sealer, error) {
	if encoded != "" {
		key, err := ParseSealingKey(encoded)
		if err != nil {
			return nil, err
		}
		return NewSealer(key)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	path := filepath.Join(dataDir, "secret.key")
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		enc := base64.StdEncoding.EncodeToString(key)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			_, err = f.WriteString(enc)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil && !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("write %s: %w", path, err)
		}
		if b, err = os.ReadFile(path); err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
	} else if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	key, err := ParseSealingKey(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, err
	}
	return NewSealer(key)
}
