package refserver

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// ZooKeeper reads every string of a request into a Java String (UTF-8
// decoding, each malformed sequence becoming U+FFFD) and writes strings back
// with its own encoder, which encodes each UTF-16 unit on its own: a
// character outside the BMP goes out as two 3-byte surrogates (CESU-8).
// Paths in the tree are always well-formed BMP text, so this shows only
// where a server echoes what a client sent: sync's path, the events
// setWatches fires at once, digest user names and ACL ids. javaString and
// javaWire reproduce the two conversions there.

// javaString returns s as the Java String ZooKeeper decodes it to (as
// valid UTF-8): each malformed sequence becomes U+FFFD, grouped as Java's
// decoder groups them (a 3-byte encoded surrogate is one, a truncated
// sequence at the end is one, a stray byte is one).
func javaString(s string) string {
	if isASCII(s) || utf8.ValidString(s) {
		return s
	}
	cont := func(b byte) bool { return b&0xc0 == 0x80 }
	var out strings.Builder
	n := len(s)
	for i := 0; i < n; {
		b1 := s[i]
		i++
		switch {
		case b1 < 0x80:
			out.WriteByte(b1)
		case b1 >= 0xc2 && b1 <= 0xdf:
			if i < n && cont(s[i]) {
				out.WriteString(s[i-1 : i+1])
				i++
			} else {
				out.WriteRune(utf8.RuneError)
			}
		case b1 >= 0xe0 && b1 <= 0xef:
			overlong := func(b2 byte) bool { return b1 == 0xe0 && b2&0xe0 == 0x80 }
			if i+1 < n {
				b2, b3 := s[i], s[i+1]
				switch {
				case overlong(b2) || !cont(b2):
					out.WriteRune(utf8.RuneError) // b1 alone
				case !cont(b3):
					out.WriteRune(utf8.RuneError) // b1 b2
					i++
				default:
					r := rune(b1&0x0f)<<12 | rune(b2&0x3f)<<6 | rune(b3&0x3f)
					if utf16.IsSurrogate(r) {
						r = utf8.RuneError
					}
					out.WriteRune(r)
					i += 2
				}
				continue
			}
			out.WriteRune(utf8.RuneError)
			if i < n && !overlong(s[i]) && cont(s[i]) {
				i = n // a truncated sequence at the end is one U+FFFD
			}
		case b1 >= 0xf0 && b1 <= 0xf7:
			badSecond := func(b2 byte) bool {
				return b1 > 0xf4 || (b1 == 0xf0 && (b2 < 0x90 || b2 > 0xbf)) || (b1 == 0xf4 && b2&0xf0 != 0x80) || !cont(b2)
			}
			if i+2 < n {
				b2, b3, b4 := s[i], s[i+1], s[i+2]
				switch {
				case badSecond(b2):
				case !cont(b3):
					i++
				case !cont(b4):
					i += 2
				default:
					out.WriteString(s[i-1 : i+3])
					i += 3
					continue
				}
				out.WriteRune(utf8.RuneError)
				continue
			}
			out.WriteRune(utf8.RuneError)
			if i < n && badSecond(s[i]) {
				continue
			}
			i++
			if i < n && !cont(s[i]) {
				continue
			}
			i = n
		default:
			out.WriteRune(utf8.RuneError)
		}
	}
	return out.String()
}

// javaWire returns the bytes ZooKeeper writes for s (valid UTF-8, as
// javaString returns it): characters outside the BMP as two encoded
// surrogates.
func javaWire(s string) string {
	if isASCII(s) {
		return s
	}
	need := false
	for _, r := range s {
		if r > 0xffff {
			need = true
			break
		}
	}
	if !need {
		return s
	}
	var out strings.Builder
	for _, r := range s {
		if r <= 0xffff {
			out.WriteRune(r)
			continue
		}
		hi, lo := utf16.EncodeRune(r)
		for _, u := range []rune{hi, lo} {
			out.Write([]byte{byte(0xe0 | u>>12), byte(0x80 | (u>>6)&0x3f), byte(0x80 | u&0x3f)})
		}
	}
	return out.String()
}

// javaEcho is a client's string as ZooKeeper sends it back.
func javaEcho(s string) string { return javaWire(javaString(s)) }

// javaTrim is Java's String.trim: it strips every character up to U+0020
// (controls included) and nothing else.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
