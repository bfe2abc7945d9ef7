package hostconfig

// stripJSONC returns data with JSON-with-comments reduced to JSON: every
// // and /* */ comment outside strings and every comma followed (past
// whitespace and comments) by "}" or "]" is replaced by spaces, newlines
// kept, so byte offsets, lines and columns of what remains are unchanged.
// VS Code's and Gemini CLI's files are JSON with comments. An unterminated
// block comment is left as is, for the JSON parser to report.
func stripJSONC(data []byte) []byte {
	out := make([]byte, len(data))
	copy(out, data)
	blank := func(from, to int) {
		for i := from; i < to; i++ {
			if out[i] != '\n' && out[i] != '\r' {
				out[i] = ' '
			}
		}
	}
	lastComma := -1
	for i := 0; i < len(out); {
		c := out[i]
		switch {
		case c == '"':
			lastComma = -1
			i++
			for i < len(out) && out[i] != '"' {
				if out[i] == '\\' {
					i++
				}
				i++
			}
			i++
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			j := i
			for j < len(out) && out[j] != '\n' {
				j++
			}
			blank(i, j)
			i = j
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			j := i + 2
			for j+1 < len(out) && !(out[j] == '*' && out[j+1] == '/') {
				j++
			}
			if j+1 >= len(out) {
				return out
			}
			blank(i, j+2)
			i = j + 2
		case c == ',':
			lastComma = i
			i++
		case c == '}' || c == ']':
			if lastComma >= 0 {
				out[lastComma] = ' '
			}
			lastComma = -1
			i++
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		default:
			lastComma = -1
			i++
		}
	}
	return out
}
