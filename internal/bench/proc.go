package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// procIO reads syscr and rchar of /proc/self/io.
func procIO() (syscr, rchar int64, err error) {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0, 0, fmt.Errorf("read /proc/self/io: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := bytes.Cut(sc.Bytes(), []byte(": "))
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
		switch string(k) {
		case "syscr":
			syscr = n
		case "rchar":
			rchar = n
		}
	}
	return syscr, rchar, nil
}
