#include "dialog/version.h"

namespace dialog {

const char *version()
{
    return DIALOG_VERSION_STRING;
}

} // namespace dialog
