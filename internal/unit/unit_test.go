package unit

import (
	"math"
	"testing"
)

func TestFormats(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name string
		f    func(float64) string
		in   float64
		want string
	}{
		{"Rate", Rate, 1_234_567, "1.23M"},
		{"Rate", Rate, 812_400, "812k"},
		{"Rate", Rate, 999_999, "1000k"},
		{"Rate", Rate, 950.4, "950"},
		{"Rate", Rate, 0, "0"},
		{"Rate3", Rate3, 2640, "2.64k"},
		{"Rate3", Rate3, 190_000, "190k"},
		{"Rate3", Rate3, 72_000, "72k"}, // %g drops trailing zeros
		{"Rate3", Rate3, 1_234_567, "1.23M"},
		{"Rate3", Rate3, 999_700, "1M"}, // written 1e+03k before unit
		{"Rate3", Rate3, 999.7, "1k"},   // written 1e+03 before unit
		{"Rate3", Rate3, 12.34, "12.3"},
		{"Figure", Figure, 1_234_567, "1.23M"},
		{"Figure", Figure, 523_400, "523k"},
		{"Figure", Figure, 8750, "8750"},
		{"Figure", Figure, 364.2, "364"},
		{"Figure", Figure, 2.575, "2.58"},
		{"Figure", Figure, nan, "-"},
		{"Count", Count, 15_000, "15.0 k"},
		{"Count", Count, 9999, "9999"},
		{"Count", Count, 138_800_000, "138.8 M"},
		{"Count", Count, 3.4e9, "3.4 G"},
		{"Bytes", Bytes, 950, "950 B"},
		{"Bytes", Bytes, 1500, "1.5 kB"},
		{"Bytes", Bytes, 49.9e9, "49.9 GB"},
		{"Bytes", Bytes, 2.5e6, "2.5 MB"},
		{"Size", Size, 2000, "2.0 kB"},
		{"Size", Size, 632_456, "632.5 kB"},
		{"Size", Size, 2e6, "2.00 MB"},
		{"MB", MB, 62_440_000, "62.4"},
		{"Millis", Millis, 350, "350 ms"},
		{"Millis", Millis, 2000, "2.0 s"},
		{"Micros", Micros, 950, "950 µs"},
		{"Micros", Micros, 1500, "1.5 ms"},
		{"Micros", Micros, 12_400, "12 ms"},
		{"Num", Num, 1571.4, "1,571"},
		{"Num", Num, 999, "999"},
		{"Num", Num, 1_234_567, "1,234,567"},
		{"Num", Num, -571, "-571"}, // written -,571 before unit
		{"Signed", Signed, 1571, "+1,571"},
		{"Signed", Signed, -20.2, "-20"},
		{"Signed", Signed, -0.4, "+0"},
		{"Signed", Signed, 0, "+0"},
		{"Signed", Signed, 1_234_567, "+1,234,567"},
		{"Signed", Signed, -999, "-999"},
		{"Signed", Signed, -1000.4, "-1,000"},
	}
	for _, tt := range tests {
		if got := tt.f(tt.in); got != tt.want {
			t.Errorf("%s(%v) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}

// TestScaleFloor: a value below every step's From is written in the last
// step, negative ones included.
func TestScaleFloor(t *testing.T) {
	s := Scale{step(1e3, 1, 1e3, "k"), step(1, 2, 1, "")}
	for in, want := range map[float64]string{0.5: "0.50", -3: "-3.00", 2500: "2.5k"} {
		if got := s.Format(in); got != want {
			t.Errorf("Format(%v) = %q, want %q", in, got, want)
		}
	}
}
