/*
 * admin.h - forwarding header: the frontend's administration layer lives
 * in frontend/admin/ (its header is frontend/admin/admin.h). Kept so that
 * master/master.c's include of this path keeps working.
 */
#include "frontend/admin/admin.h"
