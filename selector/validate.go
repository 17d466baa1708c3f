package selector

import (
	"fmt"
	"strings"
)

// The limits the API server puts on label keys and values.
const (
	maxNameLen   = 63
	maxPrefixLen = 253
)

// checkKey reports why k is not a valid label key, or "". A key is an
// optional DNS-subdomain prefix and a slash, then a name.
func checkKey(k string) string {
	prefix, name, hasPrefix := strings.Cut(k, "/")
	if !hasPrefix {
		name = k
	}
	switch {
	case hasPrefix && strings.Contains(name, "/"):
		return fmt.Sprintf("invalid key %q: at most one '/' may separate a DNS subdomain prefix from the name", k)
	case hasPrefix && prefix == "":
		return fmt.Sprintf("invalid key %q: the prefix before '/' must not be empty", k)
	case hasPrefix && !isDNSSubdomain(prefix):
		return fmt.Sprintf("invalid key %q: prefix %q must be a lowercase DNS subdomain: at most %d characters of a-z, 0-9, '-' and '.', each dot-separated part starting and ending with a letter or digit", k, prefix, maxPrefixLen)
	case name == "":
		return fmt.Sprintf("invalid key %q: the name part must not be empty", k)
	case !isLabelName(name):
		return fmt.Sprintf("invalid key %q: name %q must be at most %d characters of A-Z, a-z, 0-9, '-', '_' and '.', starting and ending with a letter or digit", k, name, maxNameLen)
	}
	return ""
}

// checkValue reports why v is not a valid value for key, or "".
func checkValue(key, v string) string {
	if v == "" || isLabelName(v) {
		return ""
	}
	return fmt.Sprintf("invalid value %q for key %q: a value must be empty or at most %d characters of A-Z, a-z, 0-9, '-', '_' and '.', starting and ending with a letter or digit", v, key, maxNameLen)
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// isLabelName reports whether s is 1–63 characters of [A-Za-z0-9_.-] that
// start and end with an alphanumeric.
func isLabelName(s string) bool {
	if s == "" || len(s) > maxNameLen || !isAlnum(s[0]) || !isAlnum(s[len(s)-1]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// isDNSSubdomain reports whether s is a lowercase RFC 1123 subdomain.
func isDNSSubdomain(s string) bool {
	if s == "" || len(s) > maxPrefixLen {
		return false
	}
	for part := range strings.SplitSeq(s, ".") {
		if part == "" {
			return false
		}
		for i := 0; i < len(part); i++ {
			c := part[i]
			lowerAlnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
			if !lowerAlnum && (c != '-' || i == 0 || i == len(part)-1) {
				return false
			}
		}
	}
	return true
}
