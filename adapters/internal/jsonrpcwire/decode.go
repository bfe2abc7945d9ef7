package jsonrpcwire

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The envelope decoder turns one JSON text into the go-sdk's exported
// jsonrpc.Request or jsonrpc.Response without the SDK's reflective
// decoder, which builds a fresh decoder and its buffers for every message.
// It decides exactly what jsonrpc.DecodeMessage decides for a syntactically
// valid JSON text (FuzzEnvelope checks that): the same method, id, params,
// result and error, or a refusal where the SDK refuses. Duplicate keys keep
// the last value (a second "error" object updates the first, as the SDK's
// decoder does); "jsonrpc", "id", "method", "params", "result" and "error"
// match case-sensitively; a string id stays a string, a number id is
// truncated to an int64 as the SDK does. Params, Result and Error.Data are
// left raw (copied out of the text, which the caller may reuse).

// maxDepth is the nesting the SDK's decoder accepts.
const maxDepth = 1000

// scanner is a validating single-pass JSON scanner over one JSON text.
type scanner struct {
	b     []byte
	i     int
	depth int
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (s *scanner) skipSpace() {
	for s.i < len(s.b) && isSpace(s.b[s.i]) {
		s.i++
	}
}

// peek returns the next byte after whitespace, or an error at the end.
func (s *scanner) peek() (byte, error) {
	s.skipSpace()
	if s.i >= len(s.b) {
		return 0, ErrTruncated
	}
	return s.b[s.i], nil
}

// expect consumes c (after whitespace).
func (s *scanner) expect(c byte) error {
	got, err := s.peek()
	if err != nil {
		return err
	}
	if got != c {
		return ErrSyntax
	}
	s.i++
	return nil
}

// value validates one JSON value and moves past it; it returns the value's
// bytes, which alias the text.
func (s *scanner) value() ([]byte, error) {
	c, err := s.peek()
	if err != nil {
		return nil, err
	}
	start := s.i
	switch {
	case c == '{':
		err = s.object()
	case c == '[':
		err = s.array()
	case c == '"':
		_, _, err = s.str()
	case c == 't':
		err = s.literal("true")
	case c == 'f':
		err = s.literal("false")
	case c == 'n':
		err = s.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		err = s.number()
	default:
		err = ErrSyntax
	}
	if err != nil {
		return nil, err
	}
	return s.b[start:s.i], nil
}

func (s *scanner) enter() error {
	s.depth++
	if s.depth > maxDepth {
		return ErrTooDeep
	}
	s.i++
	return nil
}

func (s *scanner) object() error {
	if err := s.enter(); err != nil {
		return err
	}
	c, err := s.peek()
	if err != nil {
		return err
	}
	if c == '}' {
		s.i++
		s.depth--
		return nil
	}
	for {
		if c, err = s.peek(); err != nil {
			return err
		}
		if c != '"' {
			return ErrSyntax
		}
		if _, _, err := s.str(); err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		if _, err := s.value(); err != nil {
			return err
		}
		if c, err = s.peek(); err != nil {
			return err
		}
		s.i++
		switch c {
		case ',':
		case '}':
			s.depth--
			return nil
		default:
			return ErrSyntax
		}
	}
}

func (s *scanner) array() error {
	if err := s.enter(); err != nil {
		return err
	}
	c, err := s.peek()
	if err != nil {
		return err
	}
	if c == ']' {
		s.i++
		s.depth--
		return nil
	}
	for {
		if _, err := s.value(); err != nil {
			return err
		}
		if c, err = s.peek(); err != nil {
			return err
		}
		s.i++
		switch c {
		case ',':
		case ']':
			s.depth--
			return nil
		default:
			return ErrSyntax
		}
	}
}

// str scans a string at the opening quote; it returns its raw contents
// (between the quotes, aliasing the text) and whether they need
// unescaping (an escape or a non-ASCII byte).
func (s *scanner) str() (raw []byte, slow bool, err error) {
	s.i++
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			raw = s.b[start:s.i]
			s.i++
			return raw, slow, nil
		case c == '\\':
			slow = true
			s.i++
			if s.i >= len(s.b) {
				return nil, false, ErrTruncated
			}
			switch s.b[s.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i++
			case 'u':
				s.i++
				for range 4 {
					if s.i >= len(s.b) {
						return nil, false, ErrTruncated
					}
					if !isHex(s.b[s.i]) {
						return nil, false, ErrSyntax
					}
					s.i++
				}
			default:
				return nil, false, ErrSyntax
			}
		case c < 0x20:
			return nil, false, ErrSyntax
		default:
			if c >= utf8.RuneSelf {
				slow = true
			}
			s.i++
		}
	}
	return nil, false, ErrTruncated
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func (s *scanner) literal(lit string) error {
	for k := range len(lit) {
		if s.i+k >= len(s.b) {
			return ErrTruncated
		}
		if s.b[s.i+k] != lit[k] {
			return ErrSyntax
		}
	}
	s.i += len(lit)
	return nil
}

func (s *scanner) digits() error {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	if s.i == start {
		if s.i >= len(s.b) {
			return ErrTruncated
		}
		return ErrSyntax
	}
	return nil
}

func (s *scanner) number() error {
	if s.b[s.i] == '-' {
		s.i++
	}
	if s.i >= len(s.b) {
		return ErrTruncated
	}
	switch c := s.b[s.i]; {
	case c == '0':
		s.i++
	case c >= '1' && c <= '9':
		_ = s.digits()
	default:
		return ErrSyntax
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if err := s.digits(); err != nil {
			return err
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if err := s.digits(); err != nil {
			return err
		}
	}
	return nil
}

// unquote returns the string a scanned string's contents decode to, as the
// SDK's decoder does (invalid UTF-8 and lone surrogates become U+FFFD).
func unquote(raw []byte, slow bool) (string, error) {
	if !slow {
		return string(raw), nil
	}
	if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		return string(raw), nil
	}
	quoted := make([]byte, 0, len(raw)+2)
	quoted = append(append(append(quoted, '"'), raw...), '"')
	var out string
	if err := json.Unmarshal(quoted, &out); err != nil {
		return "", ErrSyntax
	}
	return out, nil
}

// member reads an object member's key and the colon after it, and peeks
// the first byte of its value (which it leaves unread).
func (s *scanner) member() (k string, c byte, err error) {
	if c, err = s.peek(); err != nil {
		return "", 0, err
	}
	if c != '"' {
		return "", 0, ErrSyntax
	}
	kraw, kslow, err := s.str()
	if err != nil {
		return "", 0, err
	}
	if err := s.expect(':'); err != nil {
		return "", 0, err
	}
	if k, err = key(kraw, kslow); err != nil {
		return "", 0, err
	}
	if c, err = s.peek(); err != nil {
		return "", 0, err
	}
	return k, c, nil
}

// key reports which envelope field a scanned key names, by its decoded
// value: exact, case-sensitive.
func key(raw []byte, slow bool) (string, error) {
	if !slow {
		return knownKey(raw), nil
	}
	k, err := unquote(raw, slow)
	if err != nil {
		return "", err
	}
	return knownKey([]byte(k)), nil
}

func knownKey(k []byte) string {
	switch string(k) {
	case "jsonrpc":
		return "jsonrpc"
	case "id":
		return "id"
	case "method":
		return "method"
	case "params":
		return "params"
	case "result":
		return "result"
	case "error":
		return "error"
	case "code":
		return "code"
	case "message":
		return "message"
	case "data":
		return "data"
	}
	return ""
}

// methodName returns the method as a string, without allocating for the
// methods a server sends a client.
func methodName(raw []byte) string {
	switch string(raw) {
	case "notifications/progress":
		return "notifications/progress"
	case "notifications/message":
		return "notifications/message"
	case "notifications/cancelled":
		return "notifications/cancelled"
	case "notifications/tools/list_changed":
		return "notifications/tools/list_changed"
	case "notifications/prompts/list_changed":
		return "notifications/prompts/list_changed"
	case "notifications/resources/list_changed":
		return "notifications/resources/list_changed"
	case "notifications/resources/updated":
		return "notifications/resources/updated"
	case "notifications/elicitation/complete":
		return "notifications/elicitation/complete"
	case "ping":
		return "ping"
	case "roots/list":
		return "roots/list"
	case "sampling/createMessage":
		return "sampling/createMessage"
	case "elicitation/create":
		return "elicitation/create"
	}
	return string(raw)
}

// Value kinds of the last "id" and "method" members.
const (
	kindAbsent = iota
	kindNull
	kindString
	kindNumber
	kindOther
)

// Decode decodes data, one JSON text, into the message jsonrpc.DecodeMessage
// returns for it: a *jsonrpc.Request (a call when its ID is valid, a
// notification otherwise) or a *jsonrpc.Response, with the same method, id,
// params, result and error. It refuses data where DecodeMessage refuses it
// (a JSON-RPC batch, an array, included) and any data that is not valid
// JSON, as encoding/json judges it (FuzzEnvelope checks both). Whitespace
// around the message is allowed, as in any JSON text.
//
// Every error is one of ErrTruncated, ErrSyntax, ErrTooDeep, ErrNotMessage
// and ErrTrailing, and matches ErrMalformed under errors.Is; its text never
// holds a byte of data. data is not retained: Params, Result and Error.Data
// are copied out of it, so the caller may reuse it at once. Safe for
// concurrent use (it keeps no state).
func Decode(data []byte) (jsonrpc.Message, error) {
	s := scanner{b: data}
	c, err := s.peek()
	if err != nil {
		return nil, err
	}
	if c != '{' {
		if _, err := s.value(); err != nil {
			return nil, err
		}
		return nil, ErrNotMessage // a JSON value, but not a message
	}
	m, err := s.envelope()
	if err != nil {
		return nil, err
	}
	if s.skipSpace(); s.i < len(data) {
		return nil, ErrTrailing
	}
	return m, nil
}

// envelope decodes the object at s.i.
func (s *scanner) envelope() (jsonrpc.Message, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	var (
		version        string
		idKind         int
		id             jsonrpc.ID
		methodKind     int
		methodRaw      []byte
		methodSlow     bool
		params, result []byte
		wireErr        *jsonrpc.Error
		c              byte
		err            error
		stringID       []byte
		stringIDSlow   bool
		bad            bool
	)
	if c, err = s.peek(); err != nil {
		return nil, err
	}
	if c == '}' {
		s.i++
		s.depth--
	} else {
		for {
			var k string
			if k, c, err = s.member(); err != nil {
				return nil, err
			}
			switch k {
			case "jsonrpc":
				switch {
				case c == '"':
					raw, slow, err := s.str()
					if err != nil {
						return nil, err
					}
					if version, err = unquote(raw, slow); err != nil {
						return nil, err
					}
				case c == 'n':
					if err := s.literal("null"); err != nil {
						return nil, err
					}
				default:
					if _, err := s.value(); err != nil {
						return nil, err
					}
					bad = true // not a string: the SDK's decoder fails
				}
			case "id":
				v, err := s.value()
				if err != nil {
					return nil, err
				}
				switch {
				case c == '"':
					idKind, stringID, stringIDSlow = kindString, v[1:len(v)-1], bytes.IndexByte(v, '\\') >= 0 || !isASCII(v)
				case c == 'n':
					idKind = kindNull
				case c == '-' || c >= '0' && c <= '9':
					f, err := strconv.ParseFloat(string(v), 64)
					if err != nil {
						return nil, ErrNotMessage // out of range for a float64
					}
					idKind = kindNumber
					id, _ = jsonrpc.MakeID(f) // a float64 is an int64 id, truncated
				default:
					idKind = kindOther
				}
			case "method":
				v, err := s.value()
				if err != nil {
					return nil, err
				}
				switch {
				case c == '"':
					methodKind, methodRaw, methodSlow = kindString, v[1:len(v)-1], bytes.IndexByte(v, '\\') >= 0 || !isASCII(v)
				case c == 'n':
					methodKind = kindNull
				default:
					methodKind = kindOther
				}
			case "params":
				if params, err = s.value(); err != nil {
					return nil, err
				}
			case "result":
				if result, err = s.value(); err != nil {
					return nil, err
				}
			case "error":
				switch c {
				case 'n':
					if err := s.literal("null"); err != nil {
						return nil, err
					}
					wireErr = nil
				case '{':
					if wireErr == nil {
						wireErr = &jsonrpc.Error{}
					}
					ok, err := s.wireError(wireErr)
					if err != nil {
						return nil, err
					}
					bad = bad || !ok
				default:
					if _, err := s.value(); err != nil {
						return nil, err
					}
					bad = true
				}
			default:
				if _, err := s.value(); err != nil {
					return nil, err
				}
			}
			if c, err = s.peek(); err != nil {
				return nil, err
			}
			s.i++
			if c == '}' {
				s.depth--
				break
			}
			if c != ',' {
				return nil, ErrSyntax
			}
		}
	}
	if bad || version != "2.0" {
		return nil, ErrNotMessage
	}
	switch idKind {
	case kindString:
		v, err := unquote(stringID, stringIDSlow)
		if err != nil {
			return nil, err
		}
		id, _ = jsonrpc.MakeID(v) // a string is a string id
	case kindNumber:
		// id was set when the member was read.
	case kindOther:
		return nil, ErrNotMessage
	default:
		id = jsonrpc.ID{}
	}
	switch methodKind {
	case kindString, kindNull:
		method := ""
		if methodKind == kindString {
			if methodSlow {
				if method, err = unquote(methodRaw, true); err != nil {
					return nil, err
				}
			} else {
				method = methodName(methodRaw)
			}
		}
		return &jsonrpc.Request{ID: id, Method: method, Params: clone(params)}, nil
	case kindOther:
		return nil, ErrNotMessage
	}
	if !id.IsValid() {
		return nil, ErrNotMessage
	}
	r := &jsonrpc.Response{ID: id, Result: clone(result)}
	if wireErr != nil {
		wireErr.Data = clone(wireErr.Data)
		r.Error = wireErr
	}
	return r, nil
}

// wireError decodes an error object at s.i into e, as the SDK's decoder
// does (fields present overwrite, null leaves a field as it was). ok is
// false when a field has a type the SDK's decoder refuses.
func (s *scanner) wireError(e *jsonrpc.Error) (ok bool, err error) {
	if err := s.enter(); err != nil {
		return false, err
	}
	ok = true
	c, err := s.peek()
	if err != nil {
		return false, err
	}
	if c == '}' {
		s.i++
		s.depth--
		return ok, nil
	}
	for {
		var k string
		if k, c, err = s.member(); err != nil {
			return false, err
		}
		v, err := s.value()
		if err != nil {
			return false, err
		}
		switch k {
		case "code":
			switch {
			case c == 'n':
			case c == '-' || c >= '0' && c <= '9':
				n, err := strconv.ParseInt(string(v), 10, 64)
				if err != nil {
					ok = false // a fraction, an exponent, or out of range
				} else {
					e.Code = n
				}
			default:
				ok = false
			}
		case "message":
			switch c {
			case 'n':
			case '"':
				raw := v[1 : len(v)-1]
				if e.Message, err = unquote(raw, bytes.IndexByte(raw, '\\') >= 0 || !isASCII(raw)); err != nil {
					return false, err
				}
			default:
				ok = false
			}
		case "data":
			e.Data = v
		}
		if c, err = s.peek(); err != nil {
			return false, err
		}
		s.i++
		if c == '}' {
			s.depth--
			return ok, nil
		}
		if c != ',' {
			return false, ErrSyntax
		}
	}
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// clone copies a raw value out of the text; nil stays nil.
func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return bytes.Clone(b)
}
