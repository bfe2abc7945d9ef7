package httptransport

import (
	"bytes"
	"encoding/json"
)

// topMethod returns the string value of the top-level "method" member of
// the JSON object data, and whether it has a top-level "id" member that is
// not null (a request, not a notification); ok is false when data is not
// an object with a string "method". Members are matched by their exact
// (unescaped) name, and the last of duplicate members counts, as the
// go-sdk's decoder does. Values are skipped, not decoded, except the
// method string. It never allocates more than the method's copy.
func topMethod(data []byte) (method string, call, ok bool) {
	i := skipWS(data, 0)
	if i >= len(data) || data[i] != '{' {
		return "", false, false
	}
	i++
	for {
		i = skipWS(data, i)
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
		kend := skipString(data, i)
		if kend < 0 {
			return "", false, false
		}
		key := data[i:kend]
		i = skipWS(data, kend)
		if i >= len(data) || data[i] != ':' {
			return "", false, false
		}
		i = skipWS(data, i+1)
		vend := skipValue(data, i)
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

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] (a
// quote), or -1 when it does not end.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// skipValue returns the index after the JSON value starting at b[i], or
// -1 when it does not end. Objects and arrays are skipped by bracket
// depth, strings inside them respected; scalars run to the next
// delimiter.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end := skipString(b, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && !scalarEnd(b[j]) {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// scalarEnd reports whether c ends a scalar JSON value.
func scalarEnd(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\r', '\n':
		return true
	}
	return false
}
