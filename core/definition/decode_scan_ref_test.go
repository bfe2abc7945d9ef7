package definition

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"unicode/utf8"
)

// This file keeps the parser Decode used before decode_scan.go, built on
// json.Valid and json.Decoder.Token, as the reference FuzzDecodeScan
// compares the scanner against.

// errDecodeRefSyntax reports a structure the token stream should not produce.
var errDecodeRefSyntax = errors.New("definition: malformed JSON")

// decodeParse parses data as exactly one JSON value in valid UTF-8.
func decodeParseReference(data []byte) (*decodeValue, bool) {
	if !utf8.Valid(data) || !json.Valid(data) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeRefValue(dec, 0)
	if err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return v, true
}

// decodeRefValue reads one value from dec.
func decodeRefValue(dec *json.Decoder, depth int) (*decodeValue, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case nil:
		return &decodeValue{kind: decodeNull}, nil
	case bool:
		return &decodeValue{kind: decodeBool, b: t}, nil
	case json.Number:
		return &decodeValue{kind: decodeNumber, str: string(t)}, nil
	case string:
		return &decodeValue{kind: decodeString, str: t}, nil
	case json.Delim:
		if depth >= decodeMaxDepth {
			return nil, errDecodeRefSyntax
		}
		switch t {
		case '{':
			v := &decodeValue{kind: decodeObject}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := kt.(string)
				if !ok {
					return nil, errDecodeRefSyntax
				}
				val, err := decodeRefValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				v.members = append(v.members, decodeMember{key: key, val: val})
			}
			return v, decodeRefExpectDelim(dec, '}')
		case '[':
			v := &decodeValue{kind: decodeArray}
			for dec.More() {
				e, err := decodeRefValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				v.elems = append(v.elems, e)
			}
			return v, decodeRefExpectDelim(dec, ']')
		}
	}
	return nil, errDecodeRefSyntax
}

// decodeRefExpectDelim reads the closing delimiter want.
func decodeRefExpectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return errDecodeRefSyntax
	}
	return nil
}
