// Umbrella header: everything a DIALOG process needs.
#pragma once

#include "dialog/client.h"
#include "dialog/clientoptions.h"
#include "dialog/message.h"
#include "dialog/request.h"
#include "dialog/service.h"
#include "dialog/subscription.h"
