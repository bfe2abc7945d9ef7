package editing

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
)

// kind is the JSON kind of a node.
type kind uint8

const (
	kindScalar kind = iota
	kindObject
	kindArray
)

// Node is a JSON value decoded with its object keys in document order, so
// a file can be rewritten with every key it had, in the order it had them.
// A scalar keeps its JSON text exactly (numbers are never reformatted).
type Node struct {
	kind  kind
	raw   string // a scalar's JSON text
	keys  []string
	vals  []*Node
	items []*Node
}

// errDuplicateKey is parse's error for an object holding a key twice: a
// rewrite would have to pick one of its values.
var errDuplicateKey = errors.New("duplicate key")

// maxDepth bounds nesting, as the configuration decoder does.
const maxDepth = 10000

// Parse decodes one JSON value (and nothing after it) into a Node.
func Parse(data []byte) (*Node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := parseValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON value")
	}
	return n, nil
}

func parseValue(dec *json.Decoder, depth int) (*Node, error) {
	if depth > maxDepth {
		return nil, errors.New("nested too deep")
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &Node{kind: kindObject}
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, errors.New("object key is not a string")
				}
				if seen[k] {
					return nil, errDuplicateKey
				}
				seen[k] = true
				v, err := parseValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.keys, n.vals = append(n.keys, k), append(n.vals, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return n, nil
		case '[':
			n := &Node{kind: kindArray}
			for dec.More() {
				v, err := parseValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.items = append(n.items, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return n, nil
		}
		return nil, errors.New("unexpected delimiter")
	case json.Number:
		return &Node{raw: string(t)}, nil
	case string:
		return String(t), nil
	case bool:
		if t {
			return &Node{raw: "true"}, nil
		}
		return &Node{raw: "false"}, nil
	case nil:
		return &Node{raw: "null"}, nil
	}
	return nil, errors.New("unexpected token")
}

// String returns a string node.
func String(s string) *Node {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return &Node{raw: strings.TrimSuffix(b.String(), "\n")}
}

// Bool returns a boolean node.
func Bool(v bool) *Node {
	if v {
		return &Node{raw: "true"}
	}
	return &Node{raw: "false"}
}

// Object returns an empty object node.
func Object() *Node { return &Node{kind: kindObject} }

// Strings returns an array node of strings.
func Strings(ss []string) *Node {
	n := &Node{kind: kindArray, items: []*Node{}}
	for _, s := range ss {
		n.items = append(n.items, String(s))
	}
	return n
}

// IsObject reports whether n is a JSON object.
func (n *Node) IsObject() bool { return n != nil && n.kind == kindObject }

// Get returns the value of key in object n, nil when absent.
func (n *Node) Get(key string) *Node {
	if n == nil {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// Keys returns the keys of object n in document order (nil for another
// kind), in a new slice.
func (n *Node) Keys() []string {
	if n == nil {
		return nil
	}
	return append([]string(nil), n.keys...)
}

// Set sets key in object n: in place when present, appended otherwise.
func (n *Node) Set(key string, v *Node) {
	for i, k := range n.keys {
		if k == key {
			n.vals[i] = v
			return
		}
	}
	n.keys, n.vals = append(n.keys, key), append(n.vals, v)
}

// Delete removes key from object n and reports whether it was there.
func (n *Node) Delete(key string) bool {
	for i, k := range n.keys {
		if k == key {
			n.keys = append(n.keys[:i:i], n.keys[i+1:]...)
			n.vals = append(n.vals[:i:i], n.vals[i+1:]...)
			return true
		}
	}
	return false
}

// Marshal writes n as JSON indented by two spaces, with a final newline.
func (n *Node) Marshal() []byte {
	var b bytes.Buffer
	n.write(&b, 0)
	b.WriteByte('\n')
	return b.Bytes()
}

func (n *Node) write(b *bytes.Buffer, depth int) {
	indent := func(d int) {
		b.WriteByte('\n')
		for range d {
			b.WriteString("  ")
		}
	}
	switch n.kind {
	case kindObject:
		if len(n.keys) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			indent(depth + 1)
			b.WriteString(String(k).raw)
			b.WriteString(": ")
			n.vals[i].write(b, depth+1)
		}
		indent(depth)
		b.WriteByte('}')
	case kindArray:
		if len(n.items) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for i, v := range n.items {
			if i > 0 {
				b.WriteByte(',')
			}
			indent(depth + 1)
			v.write(b, depth+1)
		}
		indent(depth)
		b.WriteByte(']')
	default:
		b.WriteString(n.raw)
	}
}
