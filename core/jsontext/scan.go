package jsontext

// SkipSpace returns the index of the first byte of b at or after i that
// is not JSON whitespace (len(b) when there is none).
func SkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// SkipString returns the index just past the JSON string that starts at
// b[i] (a quote), or -1 when it does not end within b. Escapes are
// stepped over, not checked.
func SkipString(b []byte, i int) int {
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

// SkipValue returns the index just past the JSON value that starts at
// b[i], or -1 when it does not end within b. Objects and arrays are
// skipped by bracket depth, strings inside them respected; a scalar runs
// to the next delimiter (',', '}', ']' or whitespace). It finds where a
// value ends, it does not validate one: on a valid JSON text it returns
// the end encoding/json finds.
func SkipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return SkipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end := SkipString(b, j)
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
