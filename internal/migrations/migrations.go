// Package migrations holds webpilot's numbered SQL migrations, embedded so
// every binary carries the schema it was built against.
package migrations

import "embed"

// FS holds the goose migration files.
//
//go:embed *.sql
var FS embed.FS
