package security_test

import "bytes"

func splitYAML(raw []byte) [][]byte { return bytes.Split(raw, []byte("\n---\n")) }
