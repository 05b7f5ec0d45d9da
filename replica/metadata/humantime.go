package metadata

import (
	"math"
	"unicode"
	"unicode/utf8"
)

// parseHumantime parses a duration the way the humantime crate (2.x) does,
// which Iggy uses for a String message_expiry: one or more "<number><unit>"
// parts, whitespace allowed inside and between them, summed. Units: nsec ns,
// usec us µs, msec ms, seconds second secs sec s, minutes minute mins min m,
// hours hour hrs hr h, days day d, weeks week w, months month M (30.44 days),
// years year y (365.25 days); "nanos" and "millis" too. A number without a
// unit, an unknown unit, any other character, or an overflow of u64 seconds
// fails.
func parseHumantime(s string) (secs uint64, nanos uint32, ok bool) {
	i := 0
	// next returns the rune at i and advances.
	next := func() (rune, bool) {
		if i >= len(s) {
			return 0, false
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		return r, true
	}
	isUnitRune := func(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == 'µ' }
	var total [2]uint64 // seconds, nanoseconds (< 1e9)
	add := func(n uint64, unit string) bool {
		var mulSecs, mulNanos uint64
		switch unit {
		case "nanos", "nsec", "ns":
			mulNanos = 1
		case "usec", "us", "µs":
			mulNanos = 1_000
		case "millis", "msec", "ms":
			mulNanos = 1_000_000
		case "seconds", "second", "secs", "sec", "s":
			mulSecs = 1
		case "minutes", "minute", "min", "mins", "m":
			mulSecs = 60
		case "hours", "hour", "hr", "hrs", "h":
			mulSecs = 3600
		case "days", "day", "d":
			mulSecs = 86_400
		case "weeks", "week", "w":
			mulSecs = 604_800
		case "months", "month", "M":
			mulSecs = 2_630_016
		case "years", "year", "y":
			mulSecs = 31_557_600
		default:
			return false
		}
		var ds, dn uint64
		if mulSecs != 0 {
			if n > math.MaxUint64/mulSecs {
				return false
			}
			ds = n * mulSecs
		} else {
			// n * mulNanos may overflow u64: split n first.
			ds = n / (1_000_000_000 / mulNanos)
			dn = n % (1_000_000_000 / mulNanos) * mulNanos
		}
		s, n2 := total[0], total[1]+dn
		if n2 >= 1_000_000_000 {
			n2 -= 1_000_000_000
			ds++ // cannot overflow: ds <= MaxUint64 / 1000
		}
		if s > math.MaxUint64-ds {
			return false
		}
		total = [2]uint64{s + ds, n2}
		return true
	}
	// firstDigit skips whitespace and returns the first digit; anything else
	// fails, and the end of input ends the parse.
	firstDigit := func() (n uint64, more, ok bool) {
		for {
			r, have := next()
			switch {
			case !have:
				return 0, false, true
			case r >= '0' && r <= '9':
				return uint64(r - '0'), true, true
			case unicode.IsSpace(r):
				continue
			default:
				return 0, false, false
			}
		}
	}
	n, more, good := firstDigit()
	if !good || !more {
		return 0, 0, false // empty input, or no number first
	}
	for {
		// The rest of the number (whitespace may separate digits).
		unitStart := -1
		for {
			at := i
			r, have := next()
			if !have {
				break
			}
			if r >= '0' && r <= '9' {
				d := uint64(r - '0')
				if n > (math.MaxUint64-d)/10 {
					return 0, 0, false
				}
				n = n*10 + d
				continue
			}
			if unicode.IsSpace(r) {
				continue
			}
			if isUnitRune(r) {
				unitStart = at
				break
			}
			return 0, 0, false
		}
		if unitStart < 0 {
			return 0, 0, false // a number without a unit
		}
		// The unit runs to whitespace, a digit (the next part) or the end.
		unitEnd, nextDigit := len(s), -1
		for {
			at := i
			r, have := next()
			if !have {
				break
			}
			if r >= '0' && r <= '9' {
				unitEnd, nextDigit = at, int(r-'0')
				break
			}
			if unicode.IsSpace(r) {
				unitEnd = at
				break
			}
			if !isUnitRune(r) {
				return 0, 0, false
			}
		}
		if !add(n, s[unitStart:unitEnd]) {
			return 0, 0, false
		}
		if nextDigit >= 0 {
			n = uint64(nextDigit)
			continue
		}
		n, more, good = firstDigit()
		if !good {
			return 0, 0, false
		}
		if !more {
			return total[0], uint32(total[1]), true
		}
	}
}
