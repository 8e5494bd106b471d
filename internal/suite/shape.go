package suite

import "fmt"

// What a runner's JSON report may hold. A report is written by code the
// customer controls (a run's reporter, or an upload), and decoding it
// costs far more than its bytes: 1,000,000 empty tests are 3 MB of JSON
// and over a gigabyte decoded. Its shape is counted, in one pass with
// constant memory per level, before it is decoded.
const (
	// MaxReportTests bounds the tests of one report (the largest real
	// suites hold a few thousand).
	MaxReportTests = 20_000
	// maxReportSuiteDepth bounds how deeply its suites nest (describe
	// blocks in describe blocks, under a file and a project).
	maxReportSuiteDepth = 32
	// maxReportDepth bounds how deeply any of its values nest.
	maxReportDepth = 128
	// maxReportElements bounds the elements of its arrays of results,
	// attachments, errors and steps together.
	maxReportElements = 400_000
)

// ShapeError says which of a report's bounds it went past.
type ShapeError struct {
	What  string
	Limit int
}

func (e *ShapeError) Error() string {
	return fmt.Sprintf("the runner's report holds more than %d %s", e.Limit, e.What)
}

// checkReportShape counts what a JSON report holds (tests, how deeply its
// suites and values nest, its other arrays' elements) without decoding
// it, and refuses it at the first bound it passes. Invalid JSON is left
// to the decoder to refuse.
func checkReportShape(raw []byte) error {
	// The keys counted, and any other.
	const (
		other = iota
		testsKey
		suitesKey
		elementsKey
	)
	type frame struct {
		array bool
		key   int // the key this container is the value of (an array's elements share it)
	}
	var (
		stack    []frame
		key      int  // the last key read in the current object
		expKey   bool // the next string in this object is a key
		suites   int  // "suites" arrays open
		tests    int
		elements int
	)
	// value is called where a value starts inside the current container.
	value := func() error {
		if len(stack) == 0 || !stack[len(stack)-1].array {
			return nil
		}
		switch stack[len(stack)-1].key {
		case testsKey:
			if tests++; tests > MaxReportTests {
				return &ShapeError{"tests", MaxReportTests}
			}
		case elementsKey:
			if elements++; elements > maxReportElements {
				return &ShapeError{"results, attachments, errors and steps", maxReportElements}
			}
		}
		return nil
	}
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; c {
		case '"':
			start := i + 1
			for i++; i < len(raw) && raw[i] != '"'; i++ {
				if raw[i] == '\\' {
					i++
				}
			}
			if len(stack) > 0 && !stack[len(stack)-1].array && expKey {
				expKey = false
				// Compared in place: a key read is never copied.
				switch string(raw[start:min(i, len(raw))]) {
				case "tests":
					key = testsKey
				case "suites":
					key = suitesKey
				case "results", "attachments", "errors", "steps", "annotations", "stdout", "stderr":
					key = elementsKey
				default:
					key = other
				}
				continue
			}
			if err := value(); err != nil {
				return err
			}
		case '{', '[':
			if err := value(); err != nil {
				return err
			}
			f := frame{array: c == '['}
			if len(stack) > 0 {
				if top := stack[len(stack)-1]; top.array {
					f.key = top.key
				} else {
					f.key = key
				}
			}
			if f.array && f.key == suitesKey {
				if suites++; suites > maxReportSuiteDepth {
					return &ShapeError{"levels of nested suites", maxReportSuiteDepth}
				}
			}
			if stack = append(stack, f); len(stack) > maxReportDepth {
				return &ShapeError{"levels of nesting", maxReportDepth}
			}
			expKey = c == '{'
		case '}', ']':
			if len(stack) == 0 {
				return nil // invalid: the decoder says so
			}
			if f := stack[len(stack)-1]; f.array && f.key == suitesKey {
				suites--
			}
			stack = stack[:len(stack)-1]
		case ',':
			expKey = len(stack) > 0 && !stack[len(stack)-1].array
		case ' ', '\t', '\n', '\r', ':':
		default:
			// A number, true, false or null starts here: read it whole.
			if err := value(); err != nil {
				return err
			}
			for i+1 < len(raw) && !jsonDelimiter(raw[i+1]) {
				i++
			}
		}
	}
	return nil
}

// jsonDelimiter says c ends a bare JSON value.
func jsonDelimiter(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\n', '\r', ':':
		return true
	}
	return false
}
