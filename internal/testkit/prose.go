package testkit

import "strings"

// Prose is a Markdown page's text with its fenced code blocks blanked,
// line breaks kept (so line numbers still hold), so that inline code is
// found only in the prose. The docs tests of e2e and deploy both read
// commands from it.
func Prose(text string) string {
	lines := strings.Split(text, "\n")
	in := false
	for i, l := range lines {
		fence := strings.HasPrefix(strings.TrimSpace(l), "```")
		if fence || in {
			lines[i] = ""
		}
		if fence {
			in = !in
		}
	}
	return strings.Join(lines, "\n")
}
