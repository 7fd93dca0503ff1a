package v1

// Hub marks v1 as the conversion hub: every other version of App converts to and from it.
func (*App) Hub() {}
