package main

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/webpilot/webpilot/api"
	"github.com/webpilot/webpilot/client"
	"github.com/webpilot/webpilot/internal/jobs"
	"github.com/webpilot/webpilot/internal/suite"
	"github.com/webpilot/webpilot/internal/worker"
)

// TestTheClientsTypesAreTheAPIs fails when a type of the API changed and
// the client's copy was not generated again.
func TestTheClientsTypesAreTheAPIs(t *testing.T) {
	want, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../client/types.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("client/types.go is not what the API's types generate: run go generate ./client")
	}
}

// TestWhatTheServerWritesTheClientReads encodes server values with every
// field set, decodes them into the client's types refusing unknown fields,
// and encodes them again: the JSON must come back as it went.
func TestWhatTheServerWritesTheClientReads(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		server any
		client any
	}{
		{"job view", &api.JobView{}, &client.JobView{}},
		{"submission", &jobs.Submission{}, &client.Submission{}},
		{"project repair", &suite.ProjectRepairResult{}, &client.ProjectRepairResult{}},
		{"project file", &worker.ProjectFileResult{}, &client.ProjectFileResult{}},
		{"written into a project", &suite.IntoProject{}, &client.IntoProject{}},
		{"finding", &api.FindingList{}, &client.FindingList{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fill(reflect.ValueOf(c.server).Elem(), 0)
			want, err := json.Marshal(c.server)
			if err != nil {
				t.Fatal(err)
			}
			dec := json.NewDecoder(bytes.NewReader(want))
			dec.DisallowUnknownFields()
			if err := dec.Decode(c.client); err != nil {
				t.Fatalf("the client cannot read the server's %T: %v", c.server, err)
			}
			got, err := json.Marshal(c.client)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%T read back as\n%s\nwant\n%s", c.client, got, want)
			}
		})
	}
}

// fill sets every encoded field of v to a value that is not its zero.
func fill(v reflect.Value, depth int) {
	if depth > 6 {
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(7)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), depth+1)
	case reflect.Slice:
		if v.Type() == reflect.TypeFor[json.RawMessage]() {
			v.SetBytes([]byte(`{"raw":true}`))
			return
		}
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, depth+1)
		fill(e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		if v.Type().PkgPath() == "time" {
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	}
}
