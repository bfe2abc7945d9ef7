package httptransport

import (
	"bytes"
	"encoding/json"

	"github.com/mcpward/mcpward/core/jsontext"
)

// topMethod returns the string value of the top-level "method" member of
// the JSON object data, and whether it has a top-level "id" member that is
// not null (a request, not a notification); ok is false when data is not
// an object with a string "method". Members are matched by their exact
// (unescaped) name, and the last of duplicate members counts, as the
// go-sdk's decoder does. Values are skipped, not decoded, except the
// method string. It never allocates more than the method's copy.
func topMethod(data []byte) (method string, call, ok bool) {
	i := jsontext.SkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return "", false, false
	}
	i++
	for {
		i = jsontext.SkipSpace(data, i)
		if i >= len(data) || data[i] == '}' {
			if !ok {
				return "", false, false
			}
			return method, call, true
		}
		switch data[i] {
		case ',':
			i++
			continue
		case '"':
		default:
			return "", false, false
		}
		kend := jsontext.SkipString(data, i)
		if kend < 0 {
			return "", false, false
		}
		key := data[i:kend]
		i = jsontext.SkipSpace(data, kend)
		if i >= len(data) || data[i] != ':' {
			return "", false, false
		}
		i = jsontext.SkipSpace(data, i+1)
		vend := jsontext.SkipValue(data, i)
		if vend < 0 {
			return "", false, false
		}
		switch {
		case keyIs(key, "method"):
			method, ok = "", false
			if data[i] == '"' {
				var m string // here, so only a method member moves it to the heap
				if err := json.Unmarshal(data[i:vend], &m); err == nil {
					method, ok = m, true
				}
			}
		case keyIs(key, "id"):
			call = !bytes.Equal(data[i:vend], []byte("null"))
		}
		i = vend
	}
}

// keyIs reports whether the quoted JSON string key is name once unescaped.
func keyIs(key []byte, name string) bool {
	if bytes.IndexByte(key, '\\') < 0 {
		return len(key) == len(name)+2 && string(key[1:len(key)-1]) == name
	}
	var s string
	return json.Unmarshal(key, &s) == nil && s == name
}
