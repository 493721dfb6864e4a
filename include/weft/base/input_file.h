// Files named by a person (CLI arguments such as --db or a document file, API
// paths): checked to be regular files before anything opens them, and read
// without ever blocking, since opening a FIFO for reading waits for a writer
// and a device may never end.
//
// Errors: kNotFound when the path does not exist; kPermissionDenied when it
// may not be read; kInvalidArgument naming what the path is instead ("'x' is
// a FIFO (named pipe), not a block database file"); kResourceExhausted for a
// file over the size limit. Symbolic links are followed.
//
// Thread safety: stateless functions.
#ifndef WEFT_BASE_INPUT_FILE_H_
#define WEFT_BASE_INPUT_FILE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "weft/base/status.h"

namespace weft {

// Bound on read_regular_file's default size.
inline constexpr int64_t kMaxInputFileBytes = int64_t{1} << 30;

// What a file of type `mode` (st_mode) is, for messages: "a directory", "a FIFO
// (named pipe)", "a socket", "a character device", "a block device", "a regular
// file" or "a symbolic link".
const char* file_kind_name(unsigned mode);

// OK when `path` is a regular file; `what` names what it should be
// ("block database file").
Status check_regular_file(const std::string& path, std::string_view what);

// The whole content of the regular file `path` (opened non-blocking, checked
// on the open descriptor, then read); errors as above.
Result<std::string> read_regular_file(const std::string& path, std::string_view what,
                                      int64_t max_bytes = kMaxInputFileBytes);

}  // namespace weft

#endif  // WEFT_BASE_INPUT_FILE_H_
