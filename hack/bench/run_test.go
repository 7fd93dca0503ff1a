package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOptionsRefuseCountsBelowOneNamingTheFlag(t *testing.T) {
	good := options{apps: 1000, concurrency: 16, rounds: 3}
	assert.NoError(t, good.validate())
	for flag, o := range map[string]options{
		"--apps":        {apps: 0, concurrency: 16, rounds: 3},
		"--concurrency": {apps: 1000, concurrency: -1, rounds: 3},
		"--rounds":      {apps: 1000, concurrency: 16, rounds: 0},
	} {
		err := o.validate()
		if assert.Error(t, err, flag) {
			assert.Contains(t, err.Error(), flag+" must be at least 1")
		}
	}
}
