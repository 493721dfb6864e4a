// A unified diff computed only over the region where two texts differ (plus
// context), so that a small edit of a large file costs one pass over it rather
// than a line diff of the whole file. Private to src/server/.
#ifndef WEFT_SRC_SERVER_TOOLS_REGION_DIFF_H_
#define WEFT_SRC_SERVER_TOOLS_REGION_DIFF_H_

#include <string>
#include <string_view>

#include "weft/text/unified_diff.h"

namespace weft::server::tools {

// Same text as text::make_unified_diff(old_text, new_text, options).
std::string region_diff(std::string_view old_text, std::string_view new_text,
                        const text::MakeDiffOptions& options);

}  // namespace weft::server::tools

#endif  // WEFT_SRC_SERVER_TOOLS_REGION_DIFF_H_
