package view

import (
	"io"
	"strings"
	"unicode/utf8"
)

// MinColumn is the narrowest a column FitTable shrinks is made (its
// header stays readable).
const MinColumn = 8

// FitTable writes rows (the first is the header) as columns two spaces
// apart, without trailing spaces. When width > 0 and the table is wider,
// the columns listed in shrink (indices, most expendable first is not
// required: the widest is cut first) are narrowed, never below MinColumn
// or their header, and a cell longer than its column is cut with "…".
// width <= 0 prints every cell whole (--wide, or output that is not a
// terminal). Cells are counted in runes; they must already be safe text.
func FitTable(w io.Writer, rows [][]string, width int, shrink ...int) {
	if len(rows) == 0 {
		return
	}
	n := len(rows[0])
	widths := make([]int, n)
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	if width > 0 {
		total := func() int {
			t := 2 * (n - 1)
			for _, x := range widths {
				t += x
			}
			return t
		}
		floor := func(i int) int { return max(MinColumn, utf8.RuneCountInString(rows[0][i])) }
		for total() > width {
			best := -1
			for _, i := range shrink {
				if i < n && widths[i] > floor(i) && (best < 0 || widths[i] > widths[best]) {
					best = i
				}
			}
			if best < 0 {
				break
			}
			widths[best]--
		}
	}
	var b strings.Builder
	for _, r := range rows {
		b.Reset()
		for i, c := range r {
			if width > 0 && utf8.RuneCountInString(c) > widths[i] {
				c = string([]rune(c)[:widths[i]-1]) + "…"
			}
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+2))
			}
		}
		io.WriteString(w, strings.TrimRight(b.String(), " ")+"\n")
	}
}
