// librpmp.so: the C++ client (client-cpp/include/rpmp/) as a shared library for the
// librpmp package. Its code is all in the static rpmp_client, linked whole; this file
// only gives the target a source.
namespace rpmp {
extern const char kLibrpmpVersion[] = "0.1.0";
}  // namespace rpmp
