// A planted test name with a semicolon, for test_names_check_catches_breach.
TEST_CASE("first part; second part") {}
