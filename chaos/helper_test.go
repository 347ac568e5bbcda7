package chaos

// helperEnv, when set, makes the test binary run as a helper process
// (scenario 6) instead of running tests.
const helperEnv = "ZKIT_CHAOS_HELPER"

func runHelper(role string) int { return 2 }
