package api

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
)

// caseMismatch finds the first object key of raw that encoding/json took
// for a field of t only because it matches case-insensitively ("STEPS" for
// "steps"): the API's names are case-sensitive, as its document says. It
// returns the key's JSON path and the field's name, or "" when every key
// is exact. raw must already have decoded into a value of type t.
func caseMismatch(raw []byte, t reflect.Type) (path, want string) {
	var v any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return "", ""
	}
	return walkCase(v, t, "")
}

func walkCase(v any, t reflect.Type, at string) (string, string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	join := func(k string) string {
		if at == "" {
			return k
		}
		return at + "." + k
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return "", "" // a type decoding itself from another JSON form
		}
		fields := jsonFields(t)
		for k, child := range obj {
			if f, ok := fields.exact[k]; ok {
				if p, w := walkCase(child, f, join(k)); p != "" {
					return p, w
				}
				continue
			}
			if name, ok := fields.folded[strings.ToLower(k)]; ok {
				return join(k), name
			}
		}
	case reflect.Slice, reflect.Array:
		arr, ok := v.([]any)
		if !ok || t.Elem().Kind() == reflect.Uint8 {
			return "", ""
		}
		for i, child := range arr {
			if p, w := walkCase(child, t.Elem(), fmt.Sprintf("%s[%d]", at, i)); p != "" {
				return p, w
			}
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return "", ""
		}
		for k, child := range obj {
			if p, w := walkCase(child, t.Elem(), join(k)); p != "" {
				return p, w
			}
		}
	}
	return "", ""
}

// fieldSet is a struct type's JSON field names, exact and folded.
type fieldSet struct {
	exact  map[string]reflect.Type
	folded map[string]string
}

var fieldSets sync.Map // reflect.Type -> fieldSet

// jsonFields lists the JSON names encoding/json decodes into t, embedded
// structs' included. A type with its own UnmarshalJSON is read through the
// same names (it decodes into a struct of its own fields).
func jsonFields(t reflect.Type) fieldSet {
	if fs, ok := fieldSets.Load(t); ok {
		return fs.(fieldSet)
	}
	fs := fieldSet{exact: map[string]reflect.Type{}, folded: map[string]string{}}
	var add func(t reflect.Type)
	add = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			if f.Anonymous && name == "" {
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					add(ft)
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			fs.exact[name] = f.Type
			fs.folded[strings.ToLower(name)] = name
		}
	}
	add(t)
	fieldSets.Store(t, fs)
	return fs
}
