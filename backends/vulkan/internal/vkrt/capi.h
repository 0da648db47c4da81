//go:build cgo && !novulkan

// capi.h: the C half of package vkrt. github.com/vulkan-go/vulkan binds Vulkan 1.0
// only and converts every struct through cgo allocations, so this file adds:
//   - the loader (dlopen of libvulkan.so.1) and vkEnumerateInstanceVersion;
//   - Vulkan 1.1/1.2/1.3 queries through vkGetPhysicalDeviceProperties2/Features2;
//   - VK_EXT_debug_utils messengers that store warnings/errors in a C queue;
//   - a device function table (vkGetDeviceProcAddr) and the hot path: descriptor
//     sets, command recording, submission and fences, with structs built on the
//     C stack so no Go pointer is ever stored in C memory.
// The structs below mirror the Vulkan headers (which need not be installed); when
// <vulkan/vulkan_core.h> is available their layouts are checked at compile time.

#ifndef TANDEM_VKRT_CAPI_H
#define TANDEM_VKRT_CAPI_H

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(_WIN32)
#define TDM_VKAPI __stdcall
#else
#define TDM_VKAPI
#endif

typedef int32_t tdm_result;
typedef void(TDM_VKAPI *tdm_pfn)(void);
typedef tdm_pfn(TDM_VKAPI *tdm_pfn_gipa)(void *instance, const char *name);
typedef tdm_pfn(TDM_VKAPI *tdm_pfn_gdpa)(void *device, const char *name);

// ---- structure types and flags used here -------------------------------------

enum {
    TDM_ST_SUBMIT_INFO = 4,
    TDM_ST_DESCRIPTOR_POOL_CREATE_INFO = 33,
    TDM_ST_DESCRIPTOR_SET_ALLOCATE_INFO = 34,
    TDM_ST_WRITE_DESCRIPTOR_SET = 35,
    TDM_ST_COMMAND_BUFFER_BEGIN_INFO = 42,
    TDM_ST_MEMORY_BARRIER = 46,
    TDM_ST_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES = 49,
    TDM_ST_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES = 51,
    TDM_ST_PHYSICAL_DEVICE_FEATURES_2 = 1000059000,
    TDM_ST_PHYSICAL_DEVICE_PROPERTIES_2 = 1000059001,
    TDM_ST_PHYSICAL_DEVICE_ID_PROPERTIES = 1000071004,
    TDM_ST_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES = 1000083000,
    TDM_ST_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES = 1000094000,
    TDM_ST_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT = 1000128004,
    TDM_ST_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES = 1000168000,
    TDM_ST_PHYSICAL_DEVICE_DRIVER_PROPERTIES = 1000196000,
    TDM_ST_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES = 1000225000,
    TDM_ST_VALIDATION_FEATURES_EXT = 1000247000,
};

#define TDM_API_1_1 ((1u << 22) | (1u << 12))
#define TDM_API_1_2 ((1u << 22) | (2u << 12))
#define TDM_API_1_3 ((1u << 22) | (3u << 12))

#define TDM_ERROR_OUT_OF_HOST_MEMORY (-1)
#define TDM_ERROR_INITIALIZATION_FAILED (-3)
#define TDM_ERROR_EXTENSION_NOT_PRESENT (-7)
#define TDM_ERROR_FRAGMENTED_POOL (-12)
#define TDM_ERROR_OUT_OF_POOL_MEMORY (-1000069000)
#define TDM_NOT_READY 1
#define TDM_TIMEOUT 2

// ---- structures (prefixed copies of the Vulkan ones) --------------------------

typedef struct {
    int32_t sType;
    void *pNext;
} tdm_base_out;

typedef struct {
    int32_t sType;
    void *pNext;
    uint64_t properties[128]; // VkPhysicalDeviceProperties (824 bytes), unused here
} tdm_properties2;

typedef struct {
    int32_t sType;
    void *pNext;
    uint32_t features[55]; // VkPhysicalDeviceFeatures, unused here
} tdm_features2;

typedef struct {
    int32_t sType;
    void *pNext;
    uint32_t subgroupSize;
    uint32_t supportedStages;
    uint32_t supportedOperations;
    uint32_t quadOperationsInAllStages;
} tdm_subgroup_properties;

typedef struct {
    int32_t sType;
    void *pNext;
    uint32_t minSubgroupSize;
    uint32_t maxSubgroupSize;
    uint32_t maxComputeWorkgroupSubgroups;
    uint32_t requiredSubgroupSizeStages;
} tdm_subgroup_size_control_properties;

typedef struct {
    int32_t sType;
    void *pNext;
    uint32_t maxPerSetDescriptors;
    uint64_t maxMemoryAllocationSize;
} tdm_maintenance3_properties;

typedef struct {
    int32_t sType;
    void *pNext;
    uint8_t deviceUUID[16];
    uint8_t driverUUID[16];
    uint8_t deviceLUID[8];
    uint32_t deviceNodeMask;
    uint32_t deviceLUIDValid;
} tdm_id_properties;

typedef struct {
    int32_t sType;
    void *pNext;
    int32_t driverID;
    char driverName[256];
    char driverInfo[256];
    uint8_t conformanceVersion[4];
} tdm_driver_properties;

typedef struct {
    int32_t sType;
    void *pNext;
    uint32_t storageBuffer16BitAccess;
    uint32_t uniformAndStorageBuffer16BitAccess;
    uint32_t storagePushConstant16;
    uint32_t storageInputOutput16;
} tdm_16bit_storage_features;

typedef struct {
    int32_t sType;
    void *pNext;
    uint32_t storageBuffer16BitAccess;
    uint32_t uniformAndStorageBuffer16BitAccess;
    uint32_t storagePushConstant16;
    uint32_t storageInputOutput16;
    uint32_t rest[8]; // multiview .. shaderDrawParameters
} tdm_vulkan11_features;

typedef struct {
    int32_t sType;
    void *pNext;
    uint32_t samplerMirrorClampToEdge;
    uint32_t drawIndirectCount;
    uint32_t storageBuffer8BitAccess;
    uint32_t uniformAndStorageBuffer8BitAccess;
    uint32_t storagePushConstant8;
    uint32_t shaderBufferInt64Atomics;
    uint32_t shaderSharedInt64Atomics;
    uint32_t shaderFloat16;
    uint32_t shaderInt8;
    uint32_t rest[38]; // descriptorIndexing .. subgroupBroadcastDynamicId
} tdm_vulkan12_features;

typedef struct {
    int32_t sType;
    const void *pNext;
    uint32_t flags;
    uint32_t messageSeverity;
    uint32_t messageType;
    void *pfnUserCallback;
    void *pUserData;
} tdm_debug_messenger_create_info;

typedef struct {
    int32_t sType;
    const void *pNext;
    uint32_t flags;
    const char *pMessageIdName;
    int32_t messageIdNumber;
    const char *pMessage;
    // labels and objects follow; not read here
} tdm_debug_callback_data;

typedef struct {
    int32_t sType;
    const void *pNext;
    uint32_t enabledValidationFeatureCount;
    const int32_t *pEnabledValidationFeatures;
    uint32_t disabledValidationFeatureCount;
    const int32_t *pDisabledValidationFeatures;
} tdm_validation_features;

typedef struct {
    uint64_t buffer;
    uint64_t offset;
    uint64_t range;
} tdm_descriptor_buffer_info;

typedef struct {
    int32_t sType;
    const void *pNext;
    uint64_t dstSet;
    uint32_t dstBinding;
    uint32_t dstArrayElement;
    uint32_t descriptorCount;
    int32_t descriptorType;
    const void *pImageInfo;
    const tdm_descriptor_buffer_info *pBufferInfo;
    const void *pTexelBufferView;
} tdm_write_descriptor_set;

typedef struct {
    int32_t type;
    uint32_t descriptorCount;
} tdm_descriptor_pool_size;

typedef struct {
    int32_t sType;
    const void *pNext;
    uint32_t flags;
    uint32_t maxSets;
    uint32_t poolSizeCount;
    const tdm_descriptor_pool_size *pPoolSizes;
} tdm_descriptor_pool_create_info;

typedef struct {
    int32_t sType;
    const void *pNext;
    uint64_t descriptorPool;
    uint32_t descriptorSetCount;
    const uint64_t *pSetLayouts;
} tdm_descriptor_set_allocate_info;

typedef struct {
    int32_t sType;
    const void *pNext;
    uint32_t srcAccessMask;
    uint32_t dstAccessMask;
} tdm_memory_barrier;

typedef struct {
    int32_t sType;
    const void *pNext;
    uint32_t waitSemaphoreCount;
    const uint64_t *pWaitSemaphores;
    const uint32_t *pWaitDstStageMask;
    uint32_t commandBufferCount;
    void *const *pCommandBuffers;
    uint32_t signalSemaphoreCount;
    const uint64_t *pSignalSemaphores;
} tdm_submit_info;

typedef struct {
    int32_t sType;
    const void *pNext;
    uint32_t flags;
    const void *pInheritanceInfo;
} tdm_command_buffer_begin_info;

typedef struct {
    uint64_t srcOffset;
    uint64_t dstOffset;
    uint64_t size;
} tdm_buffer_copy;

// ---- layout checks against the real headers, where installed ------------------

#if defined(__has_include)
#if __has_include(<vulkan/vulkan_core.h>)
#define VK_NO_PROTOTYPES 1
#include <vulkan/vulkan_core.h>
#define TDM_SAME(T, V) _Static_assert(sizeof(T) >= sizeof(V), #T " smaller than " #V)
#define TDM_EXACT(T, V) _Static_assert(sizeof(T) == sizeof(V), #T " != " #V)
#define TDM_FIELD(T, f, V, g) _Static_assert(offsetof(T, f) == offsetof(V, g), #T "." #f)
TDM_SAME(tdm_properties2, VkPhysicalDeviceProperties2);
TDM_SAME(tdm_features2, VkPhysicalDeviceFeatures2);
TDM_EXACT(tdm_subgroup_properties, VkPhysicalDeviceSubgroupProperties);
TDM_EXACT(tdm_subgroup_size_control_properties, VkPhysicalDeviceSubgroupSizeControlProperties);
TDM_EXACT(tdm_maintenance3_properties, VkPhysicalDeviceMaintenance3Properties);
TDM_FIELD(tdm_maintenance3_properties, maxMemoryAllocationSize, VkPhysicalDeviceMaintenance3Properties, maxMemoryAllocationSize);
TDM_EXACT(tdm_id_properties, VkPhysicalDeviceIDProperties);
TDM_EXACT(tdm_driver_properties, VkPhysicalDeviceDriverProperties);
TDM_EXACT(tdm_16bit_storage_features, VkPhysicalDevice16BitStorageFeatures);
TDM_EXACT(tdm_vulkan11_features, VkPhysicalDeviceVulkan11Features);
TDM_EXACT(tdm_vulkan12_features, VkPhysicalDeviceVulkan12Features);
TDM_FIELD(tdm_vulkan12_features, shaderInt8, VkPhysicalDeviceVulkan12Features, shaderInt8);
TDM_EXACT(tdm_debug_messenger_create_info, VkDebugUtilsMessengerCreateInfoEXT);
TDM_FIELD(tdm_debug_callback_data, pMessage, VkDebugUtilsMessengerCallbackDataEXT, pMessage);
TDM_EXACT(tdm_validation_features, VkValidationFeaturesEXT);
TDM_EXACT(tdm_descriptor_buffer_info, VkDescriptorBufferInfo);
TDM_EXACT(tdm_write_descriptor_set, VkWriteDescriptorSet);
TDM_FIELD(tdm_write_descriptor_set, pBufferInfo, VkWriteDescriptorSet, pBufferInfo);
TDM_EXACT(tdm_descriptor_pool_size, VkDescriptorPoolSize);
TDM_EXACT(tdm_descriptor_pool_create_info, VkDescriptorPoolCreateInfo);
TDM_EXACT(tdm_descriptor_set_allocate_info, VkDescriptorSetAllocateInfo);
TDM_EXACT(tdm_memory_barrier, VkMemoryBarrier);
TDM_EXACT(tdm_submit_info, VkSubmitInfo);
TDM_EXACT(tdm_command_buffer_begin_info, VkCommandBufferBeginInfo);
TDM_EXACT(tdm_buffer_copy, VkBufferCopy);
#endif
#endif

// ---- loader --------------------------------------------------------------------

static void *tdm_lib;
static tdm_pfn_gipa tdm_gipa;

// tdm_load opens the Vulkan loader (path, or libvulkan.so.1 then libvulkan.so
// when path is NULL) and finds vkGetInstanceProcAddr. On failure it writes a
// reason into err and returns 0.
static int tdm_load(const char *path, char *err, size_t errlen) {
    if (tdm_gipa) {
        return 1;
    }
    const char *defaults[] = {"libvulkan.so.1", "libvulkan.so"};
    const char *one[] = {path};
    const char **names = path ? one : defaults;
    size_t n = path ? 1 : 2;
    const char *last = "unknown error";
    for (size_t i = 0; i < n; i++) {
        void *lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            const char *e = dlerror();
            if (e) {
                last = e;
            }
            continue;
        }
        tdm_pfn_gipa f = (tdm_pfn_gipa)dlsym(lib, "vkGetInstanceProcAddr");
        if (!f) {
            snprintf(err, errlen, "%s has no vkGetInstanceProcAddr", names[i]);
            dlclose(lib);
            return 0;
        }
        tdm_lib = lib;
        tdm_gipa = f;
        return 1;
    }
    snprintf(err, errlen, "cannot load the Vulkan loader: %s", last);
    return 0;
}

static void *tdm_gipa_ptr(void) { return (void *)tdm_gipa; }

static uint32_t tdm_instance_version(void) {
    typedef tdm_result(TDM_VKAPI * pfn)(uint32_t *);
    pfn f = (pfn)tdm_gipa(NULL, "vkEnumerateInstanceVersion");
    if (!f) {
        return (1u << 22); // Vulkan 1.0 loader
    }
    uint32_t v = 0;
    if (f(&v) != 0) {
        return (1u << 22);
    }
    return v;
}

// ---- physical device queries ---------------------------------------------------

typedef struct {
    uint32_t subgroupSize, subgroupStages, subgroupOps;
    uint32_t minSubgroupSize, maxSubgroupSize, maxComputeWorkgroupSubgroups;
    uint32_t maxPerSetDescriptors;
    uint64_t maxMemoryAllocationSize;
    uint8_t deviceUUID[16], driverUUID[16];
    int32_t driverID;
    char driverName[256], driverInfo[256];
    uint32_t storageBuffer16BitAccess, uniformAndStorageBuffer16BitAccess, storagePushConstant16;
    uint32_t storageBuffer8BitAccess, uniformAndStorageBuffer8BitAccess;
    uint32_t shaderFloat16, shaderInt8;
    int ok;
} tdm_devinfo;

// tdm_query_device fills out through vkGetPhysicalDeviceProperties2/Features2.
// apiVersion is the device's: structures promoted in later versions are only
// chained when the device has that version.
static void tdm_query_device(void *instance, void *phys, uint32_t apiVersion, tdm_devinfo *out) {
    memset(out, 0, sizeof(*out));
    if (apiVersion < TDM_API_1_1) {
        return;
    }
    typedef void(TDM_VKAPI * pfn_props2)(void *, void *);
    pfn_props2 props2 = (pfn_props2)tdm_gipa(instance, "vkGetPhysicalDeviceProperties2");
    pfn_props2 feats2 = (pfn_props2)tdm_gipa(instance, "vkGetPhysicalDeviceFeatures2");
    if (!props2 || !feats2) {
        return;
    }

    tdm_properties2 p2;
    tdm_subgroup_properties sg;
    tdm_maintenance3_properties m3;
    tdm_id_properties id;
    tdm_driver_properties drv;
    tdm_subgroup_size_control_properties sgc;
    memset(&p2, 0, sizeof p2);
    memset(&sg, 0, sizeof sg);
    memset(&m3, 0, sizeof m3);
    memset(&id, 0, sizeof id);
    memset(&drv, 0, sizeof drv);
    memset(&sgc, 0, sizeof sgc);
    p2.sType = TDM_ST_PHYSICAL_DEVICE_PROPERTIES_2;
    sg.sType = TDM_ST_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
    m3.sType = TDM_ST_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES;
    id.sType = TDM_ST_PHYSICAL_DEVICE_ID_PROPERTIES;
    drv.sType = TDM_ST_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
    sgc.sType = TDM_ST_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES;
    p2.pNext = &sg;
    sg.pNext = &m3;
    m3.pNext = &id;
    if (apiVersion >= TDM_API_1_2) {
        id.pNext = &drv;
        if (apiVersion >= TDM_API_1_3) {
            drv.pNext = &sgc;
        }
    }
    props2(phys, &p2);

    out->subgroupSize = sg.subgroupSize;
    out->subgroupStages = sg.supportedStages;
    out->subgroupOps = sg.supportedOperations;
    out->minSubgroupSize = sgc.minSubgroupSize ? sgc.minSubgroupSize : sg.subgroupSize;
    out->maxSubgroupSize = sgc.maxSubgroupSize ? sgc.maxSubgroupSize : sg.subgroupSize;
    out->maxComputeWorkgroupSubgroups = sgc.maxComputeWorkgroupSubgroups;
    out->maxPerSetDescriptors = m3.maxPerSetDescriptors;
    out->maxMemoryAllocationSize = m3.maxMemoryAllocationSize;
    memcpy(out->deviceUUID, id.deviceUUID, 16);
    memcpy(out->driverUUID, id.driverUUID, 16);
    out->driverID = drv.driverID;
    memcpy(out->driverName, drv.driverName, sizeof out->driverName);
    memcpy(out->driverInfo, drv.driverInfo, sizeof out->driverInfo);
    out->driverName[255] = 0;
    out->driverInfo[255] = 0;

    tdm_features2 f2;
    memset(&f2, 0, sizeof f2);
    f2.sType = TDM_ST_PHYSICAL_DEVICE_FEATURES_2;
    if (apiVersion >= TDM_API_1_2) {
        tdm_vulkan11_features f11;
        tdm_vulkan12_features f12;
        memset(&f11, 0, sizeof f11);
        memset(&f12, 0, sizeof f12);
        f11.sType = TDM_ST_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
        f12.sType = TDM_ST_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
        f2.pNext = &f11;
        f11.pNext = &f12;
        feats2(phys, &f2);
        out->storageBuffer16BitAccess = f11.storageBuffer16BitAccess;
        out->uniformAndStorageBuffer16BitAccess = f11.uniformAndStorageBuffer16BitAccess;
        out->storagePushConstant16 = f11.storagePushConstant16;
        out->storageBuffer8BitAccess = f12.storageBuffer8BitAccess;
        out->uniformAndStorageBuffer8BitAccess = f12.uniformAndStorageBuffer8BitAccess;
        out->shaderFloat16 = f12.shaderFloat16;
        out->shaderInt8 = f12.shaderInt8;
    } else {
        tdm_16bit_storage_features s16;
        memset(&s16, 0, sizeof s16);
        s16.sType = TDM_ST_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
        f2.pNext = &s16;
        feats2(phys, &f2);
        out->storageBuffer16BitAccess = s16.storageBuffer16BitAccess;
        out->uniformAndStorageBuffer16BitAccess = s16.uniformAndStorageBuffer16BitAccess;
        out->storagePushConstant16 = s16.storagePushConstant16;
    }
    out->ok = 1;
}

// tdm_feature_chain holds a pNext chain for VkDeviceCreateInfo enabling 1.1/1.2
// features; tdm_new_feature_chain returns it malloc'd (free with free) and
// tdm_feature_chain_head the pointer to put into pNext (NULL: nothing to chain).
typedef struct {
    tdm_vulkan11_features f11;
    tdm_vulkan12_features f12;
    tdm_16bit_storage_features s16;
    uint32_t apiVersion;
} tdm_feature_chain;

static tdm_feature_chain *tdm_new_feature_chain(uint32_t apiVersion, uint32_t sb16, uint32_t usb16, uint32_t sb8,
                                                uint32_t usb8, uint32_t f16, uint32_t i8) {
    tdm_feature_chain *c = (tdm_feature_chain *)calloc(1, sizeof *c);
    if (!c) {
        return NULL;
    }
    c->apiVersion = apiVersion;
    c->f11.sType = TDM_ST_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
    c->f12.sType = TDM_ST_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
    c->f11.pNext = &c->f12;
    c->f11.storageBuffer16BitAccess = sb16;
    c->f11.uniformAndStorageBuffer16BitAccess = usb16;
    c->f12.storageBuffer8BitAccess = sb8;
    c->f12.uniformAndStorageBuffer8BitAccess = usb8;
    c->f12.shaderFloat16 = f16;
    c->f12.shaderInt8 = i8;
    c->s16.sType = TDM_ST_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
    c->s16.storageBuffer16BitAccess = sb16;
    c->s16.uniformAndStorageBuffer16BitAccess = usb16;
    return c;
}

static void *tdm_feature_chain_head(tdm_feature_chain *c) {
    if (!c || c->apiVersion < TDM_API_1_1) {
        return NULL;
    }
    if (c->apiVersion >= TDM_API_1_2) {
        return &c->f11;
    }
    return &c->s16;
}

// ---- debug messages --------------------------------------------------------------

typedef struct tdm_msg {
    uint64_t owner;
    char *text;
    struct tdm_msg *next;
} tdm_msg;

static pthread_mutex_t tdm_msg_mu = PTHREAD_MUTEX_INITIALIZER;
static tdm_msg *tdm_msg_head, *tdm_msg_tail;

#define TDM_SEV_WARNING 0x100u
#define TDM_SEV_ERROR 0x1000u

static uint32_t TDM_VKAPI tdm_debug_callback(uint32_t severity, uint32_t types, const tdm_debug_callback_data *d,
                                             void *user) {
    (void)types;
    const char *sev = (severity & TDM_SEV_ERROR) ? "error" : "warning";
    const char *id = (d && d->pMessageIdName) ? d->pMessageIdName : "-";
    const char *text = (d && d->pMessage) ? d->pMessage : "";
    size_t n = strlen(sev) + strlen(id) + strlen(text) + 8;
    tdm_msg *m = (tdm_msg *)malloc(sizeof *m);
    char *s = (char *)malloc(n);
    if (!m || !s) {
        free(m);
        free(s);
        return 0;
    }
    snprintf(s, n, "%s [%s] %s", sev, id, text);
    m->owner = (uint64_t)(uintptr_t)user;
    m->text = s;
    m->next = NULL;
    pthread_mutex_lock(&tdm_msg_mu);
    if (tdm_msg_tail) {
        tdm_msg_tail->next = m;
    } else {
        tdm_msg_head = m;
    }
    tdm_msg_tail = m;
    pthread_mutex_unlock(&tdm_msg_mu);
    return 0; // VK_FALSE: do not abort the call
}

// tdm_msg_take removes and returns the oldest message of owner (free it with free),
// or NULL when there is none.
static char *tdm_msg_take(uint64_t owner) {
    char *s = NULL;
    pthread_mutex_lock(&tdm_msg_mu);
    tdm_msg *prev = NULL;
    for (tdm_msg *m = tdm_msg_head; m; prev = m, m = m->next) {
        if (m->owner != owner) {
            continue;
        }
        if (prev) {
            prev->next = m->next;
        } else {
            tdm_msg_head = m->next;
        }
        if (tdm_msg_tail == m) {
            tdm_msg_tail = prev;
        }
        s = m->text;
        free(m);
        break;
    }
    pthread_mutex_unlock(&tdm_msg_mu);
    return s;
}

static void tdm_fill_messenger_info(tdm_debug_messenger_create_info *ci, uint64_t owner) {
    memset(ci, 0, sizeof *ci);
    ci->sType = TDM_ST_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
    ci->messageSeverity = TDM_SEV_WARNING | TDM_SEV_ERROR;
    ci->messageType = 0x1 | 0x2 | 0x4; // general, validation, performance
    ci->pfnUserCallback = (void *)tdm_debug_callback;
    ci->pUserData = (void *)(uintptr_t)owner;
}

// tdm_instance_chain returns a malloc'd pNext chain for VkInstanceCreateInfo: a
// messenger create info (so messages of vkCreateInstance/vkDestroyInstance are
// caught) and, if syncval, VkValidationFeaturesEXT enabling synchronization
// validation. Free it with free after vkCreateInstance.
typedef struct {
    tdm_debug_messenger_create_info messenger;
    tdm_validation_features features;
    int32_t enabled[1];
} tdm_instance_chain_t;

static void *tdm_instance_chain(uint64_t owner, int syncval) {
    tdm_instance_chain_t *c = (tdm_instance_chain_t *)calloc(1, sizeof *c);
    if (!c) {
        return NULL;
    }
    tdm_fill_messenger_info(&c->messenger, owner);
    if (syncval) {
        c->features.sType = TDM_ST_VALIDATION_FEATURES_EXT;
        c->enabled[0] = 4; // VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT
        c->features.enabledValidationFeatureCount = 1;
        c->features.pEnabledValidationFeatures = c->enabled;
        c->messenger.pNext = &c->features;
    }
    return c;
}

static tdm_result tdm_debug_create(void *instance, uint64_t owner, uint64_t *out) {
    typedef tdm_result(TDM_VKAPI * pfn)(void *, const tdm_debug_messenger_create_info *, const void *, uint64_t *);
    pfn f = (pfn)tdm_gipa(instance, "vkCreateDebugUtilsMessengerEXT");
    if (!f) {
        return TDM_ERROR_EXTENSION_NOT_PRESENT;
    }
    tdm_debug_messenger_create_info ci;
    tdm_fill_messenger_info(&ci, owner);
    return f(instance, &ci, NULL, out);
}

static void tdm_debug_destroy(void *instance, uint64_t messenger) {
    typedef void(TDM_VKAPI * pfn)(void *, uint64_t, const void *);
    pfn f = (pfn)tdm_gipa(instance, "vkDestroyDebugUtilsMessengerEXT");
    if (f && messenger) {
        f(instance, messenger, NULL);
    }
}

// ---- compute pipelines ------------------------------------------------------------

enum {
    TDM_ST_SHADER_MODULE_CREATE_INFO = 16,
    TDM_ST_PIPELINE_SHADER_STAGE_CREATE_INFO = 18,
    TDM_ST_COMPUTE_PIPELINE_CREATE_INFO = 29,
};
#define TDM_SHADER_STAGE_COMPUTE 0x20u

typedef struct {
    int32_t sType;
    const void *pNext;
    uint32_t flags;
    size_t codeSize;
    const uint32_t *pCode;
} tdm_shader_module_create_info;

typedef struct {
    uint32_t constantID;
    uint32_t offset;
    size_t size;
} tdm_specialization_map_entry;

typedef struct {
    uint32_t mapEntryCount;
    const tdm_specialization_map_entry *pMapEntries;
    size_t dataSize;
    const void *pData;
} tdm_specialization_info;

typedef struct {
    int32_t sType;
    const void *pNext;
    uint32_t flags;
    uint32_t stage;
    uint64_t module;
    const char *pName;
    const tdm_specialization_info *pSpecializationInfo;
} tdm_pipeline_shader_stage_create_info;

typedef struct {
    int32_t sType;
    const void *pNext;
    uint32_t flags;
    tdm_pipeline_shader_stage_create_info stage;
    uint64_t layout;
    uint64_t basePipelineHandle;
    int32_t basePipelineIndex;
} tdm_compute_pipeline_create_info;

// ---- device function table -----------------------------------------------------

typedef struct {
    void(TDM_VKAPI *UpdateDescriptorSets)(void *, uint32_t, const tdm_write_descriptor_set *, uint32_t, const void *);
    tdm_result(TDM_VKAPI *AllocateDescriptorSets)(void *, const tdm_descriptor_set_allocate_info *, uint64_t *);
    tdm_result(TDM_VKAPI *CreateDescriptorPool)(void *, const tdm_descriptor_pool_create_info *, const void *,
                                               uint64_t *);
    void(TDM_VKAPI *DestroyDescriptorPool)(void *, uint64_t, const void *);
    tdm_result(TDM_VKAPI *ResetDescriptorPool)(void *, uint64_t, uint32_t);
    void(TDM_VKAPI *CmdBindPipeline)(void *, int32_t, uint64_t);
    void(TDM_VKAPI *CmdBindDescriptorSets)(void *, int32_t, uint64_t, uint32_t, uint32_t, const uint64_t *, uint32_t,
                                          const uint32_t *);
    void(TDM_VKAPI *CmdPushConstants)(void *, uint64_t, uint32_t, uint32_t, uint32_t, const void *);
    void(TDM_VKAPI *CmdDispatch)(void *, uint32_t, uint32_t, uint32_t);
    void(TDM_VKAPI *CmdPipelineBarrier)(void *, uint32_t, uint32_t, uint32_t, uint32_t, const tdm_memory_barrier *,
                                       uint32_t, const void *, uint32_t, const void *);
    void(TDM_VKAPI *CmdCopyBuffer)(void *, uint64_t, uint64_t, uint32_t, const tdm_buffer_copy *);
    void(TDM_VKAPI *CmdFillBuffer)(void *, uint64_t, uint64_t, uint64_t, uint32_t);
    void(TDM_VKAPI *CmdResetQueryPool)(void *, uint64_t, uint32_t, uint32_t);
    void(TDM_VKAPI *CmdWriteTimestamp)(void *, uint32_t, uint64_t, uint32_t);
    tdm_result(TDM_VKAPI *GetQueryPoolResults)(void *, uint64_t, uint32_t, uint32_t, size_t, void *, uint64_t,
                                              uint32_t);
    tdm_result(TDM_VKAPI *BeginCommandBuffer)(void *, const tdm_command_buffer_begin_info *);
    tdm_result(TDM_VKAPI *EndCommandBuffer)(void *);
    tdm_result(TDM_VKAPI *ResetCommandPool)(void *, uint64_t, uint32_t);
    tdm_result(TDM_VKAPI *QueueSubmit)(void *, uint32_t, const tdm_submit_info *, uint64_t);
    tdm_result(TDM_VKAPI *WaitForFences)(void *, uint32_t, const uint64_t *, uint32_t, uint64_t);
    tdm_result(TDM_VKAPI *ResetFences)(void *, uint32_t, const uint64_t *);
    tdm_result(TDM_VKAPI *GetFenceStatus)(void *, uint64_t);
    tdm_result(TDM_VKAPI *CreateShaderModule)(void *, const tdm_shader_module_create_info *, const void *, uint64_t *);
    void(TDM_VKAPI *DestroyShaderModule)(void *, uint64_t, const void *);
    tdm_result(TDM_VKAPI *CreateComputePipelines)(void *, uint64_t, uint32_t, const tdm_compute_pipeline_create_info *,
                                                  const void *, uint64_t *);
} tdm_devfns;

// tdm_load_devfns returns a malloc'd table of device functions, or NULL (with the
// missing name in missing) when one cannot be found.
static tdm_devfns *tdm_load_devfns(void *instance, void *device, char *missing, size_t missinglen) {
    tdm_pfn_gdpa gdpa = (tdm_pfn_gdpa)tdm_gipa(instance, "vkGetDeviceProcAddr");
    if (!gdpa) {
        snprintf(missing, missinglen, "vkGetDeviceProcAddr");
        return NULL;
    }
    tdm_devfns *f = (tdm_devfns *)calloc(1, sizeof *f);
    if (!f) {
        snprintf(missing, missinglen, "memory");
        return NULL;
    }
#define TDM_LOAD(name)                                              \
    do {                                                            \
        *(tdm_pfn *)&f->name = gdpa(device, "vk" #name);            \
        if (!f->name) {                                             \
            snprintf(missing, missinglen, "vk" #name);              \
            free(f);                                                \
            return NULL;                                            \
        }                                                           \
    } while (0)
    TDM_LOAD(UpdateDescriptorSets);
    TDM_LOAD(AllocateDescriptorSets);
    TDM_LOAD(CreateDescriptorPool);
    TDM_LOAD(DestroyDescriptorPool);
    TDM_LOAD(ResetDescriptorPool);
    TDM_LOAD(CmdBindPipeline);
    TDM_LOAD(CmdBindDescriptorSets);
    TDM_LOAD(CmdPushConstants);
    TDM_LOAD(CmdDispatch);
    TDM_LOAD(CmdPipelineBarrier);
    TDM_LOAD(CmdCopyBuffer);
    TDM_LOAD(CmdFillBuffer);
    TDM_LOAD(CmdResetQueryPool);
    TDM_LOAD(CmdWriteTimestamp);
    TDM_LOAD(GetQueryPoolResults);
    TDM_LOAD(BeginCommandBuffer);
    TDM_LOAD(EndCommandBuffer);
    TDM_LOAD(ResetCommandPool);
    TDM_LOAD(QueueSubmit);
    TDM_LOAD(WaitForFences);
    TDM_LOAD(ResetFences);
    TDM_LOAD(GetFenceStatus);
    TDM_LOAD(CreateShaderModule);
    TDM_LOAD(DestroyShaderModule);
    TDM_LOAD(CreateComputePipelines);
#undef TDM_LOAD
    return f;
}

// tdm_create_compute_pipeline creates a shader module from code (codeSize bytes),
// a compute pipeline of its entry point with nspec 32-bit specialization constants
// (IDs 0..nspec-1) on layout, and destroys the module. Every struct lives on the C
// stack; code, entry and spec are C memory owned by the caller.
static tdm_result tdm_create_compute_pipeline(tdm_devfns *f, void *device, const uint32_t *code, size_t codeSize,
                                              const char *entry, const uint32_t *spec, uint32_t nspec,
                                              uint64_t layout, uint64_t *out) {
    tdm_shader_module_create_info mci;
    memset(&mci, 0, sizeof mci);
    mci.sType = TDM_ST_SHADER_MODULE_CREATE_INFO;
    mci.codeSize = codeSize;
    mci.pCode = code;
    uint64_t module = 0;
    tdm_result r = f->CreateShaderModule(device, &mci, NULL, &module);
    if (r != 0) {
        return r;
    }
    tdm_specialization_map_entry *entries = NULL;
    tdm_specialization_info si;
    memset(&si, 0, sizeof si);
    if (nspec > 0) {
        entries = (tdm_specialization_map_entry *)calloc(nspec, sizeof *entries);
        if (!entries) {
            f->DestroyShaderModule(device, module, NULL);
            return TDM_ERROR_OUT_OF_HOST_MEMORY;
        }
        for (uint32_t i = 0; i < nspec; i++) {
            entries[i].constantID = i;
            entries[i].offset = 4 * i;
            entries[i].size = 4;
        }
        si.mapEntryCount = nspec;
        si.pMapEntries = entries;
        si.dataSize = 4 * (size_t)nspec;
        si.pData = spec;
    }
    tdm_compute_pipeline_create_info ci;
    memset(&ci, 0, sizeof ci);
    ci.sType = TDM_ST_COMPUTE_PIPELINE_CREATE_INFO;
    ci.stage.sType = TDM_ST_PIPELINE_SHADER_STAGE_CREATE_INFO;
    ci.stage.stage = TDM_SHADER_STAGE_COMPUTE;
    ci.stage.module = module;
    ci.stage.pName = entry;
    ci.stage.pSpecializationInfo = nspec > 0 ? &si : NULL;
    ci.layout = layout;
    ci.basePipelineIndex = -1;
    r = f->CreateComputePipelines(device, 0, 1, &ci, NULL, out);
    free(entries);
    f->DestroyShaderModule(device, module, NULL);
    return r;
}

// ---- descriptor pools and sets ----------------------------------------------------

#define TDM_DESCRIPTOR_TYPE_STORAGE_BUFFER 7

static tdm_result tdm_create_descriptor_pool(tdm_devfns *f, void *device, uint32_t maxSets, uint32_t descriptors,
                                             uint64_t *out) {
    tdm_descriptor_pool_size size = {TDM_DESCRIPTOR_TYPE_STORAGE_BUFFER, descriptors};
    tdm_descriptor_pool_create_info ci;
    memset(&ci, 0, sizeof ci);
    ci.sType = TDM_ST_DESCRIPTOR_POOL_CREATE_INFO;
    ci.maxSets = maxSets;
    ci.poolSizeCount = 1;
    ci.pPoolSizes = &size;
    return f->CreateDescriptorPool(device, &ci, NULL, out);
}

static void tdm_destroy_descriptor_pool(tdm_devfns *f, void *device, uint64_t pool) {
    f->DestroyDescriptorPool(device, pool, NULL);
}

static tdm_result tdm_reset_descriptor_pool(tdm_devfns *f, void *device, uint64_t pool) {
    return f->ResetDescriptorPool(device, pool, 0);
}

static tdm_result tdm_allocate_descriptor_set(tdm_devfns *f, void *device, uint64_t pool, uint64_t layout,
                                              uint64_t *out) {
    tdm_descriptor_set_allocate_info ai;
    memset(&ai, 0, sizeof ai);
    ai.sType = TDM_ST_DESCRIPTOR_SET_ALLOCATE_INFO;
    ai.descriptorPool = pool;
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &layout;
    return f->AllocateDescriptorSets(device, &ai, out);
}

// ---- command recording ------------------------------------------------------------

#define TDM_MAX_BINDINGS 16
#define TDM_BIND_POINT_COMPUTE 1
#define TDM_STAGE_COMPUTE_SHADER 0x800u
#define TDM_STAGE_TRANSFER 0x1000u
#define TDM_STAGE_HOST 0x4000u
#define TDM_STAGE_TOP 0x1u
#define TDM_STAGE_BOTTOM 0x2000u
#define TDM_ACCESS_SHADER_READ 0x20u
#define TDM_ACCESS_SHADER_WRITE 0x40u
#define TDM_ACCESS_TRANSFER_READ 0x800u
#define TDM_ACCESS_TRANSFER_WRITE 0x1000u
#define TDM_ACCESS_HOST_READ 0x2000u
#define TDM_SHADER_STAGE_COMPUTE 0x20u

typedef struct {
    uint64_t buffer;
    uint64_t offset;
    uint64_t range;
} tdm_binding;

// tdm_begin begins recording; once: ONE_TIME_SUBMIT (else the buffer may be submitted again).
static tdm_result tdm_begin(tdm_devfns *f, void *cmd, int once) {
    tdm_command_buffer_begin_info bi;
    memset(&bi, 0, sizeof bi);
    bi.sType = TDM_ST_COMMAND_BUFFER_BEGIN_INFO;
    bi.flags = once ? 0x1 : 0x0; // ONE_TIME_SUBMIT
    return f->BeginCommandBuffer(cmd, &bi);
}

static tdm_result tdm_end(tdm_devfns *f, void *cmd) { return f->EndCommandBuffer(cmd); }

// tdm_dispatch writes the descriptor set, binds pipeline and set (the pipeline
// only when it differs from the last one bound), pushes constants and dispatches.
static void tdm_dispatch(tdm_devfns *f, void *device, void *cmd, uint64_t set, uint64_t layout, uint64_t pipeline,
                         int bindPipeline, uint32_t nbind, const tdm_binding *b, const void *push, uint32_t pushSize,
                         uint32_t gx, uint32_t gy, uint32_t gz) {
    tdm_descriptor_buffer_info infos[TDM_MAX_BINDINGS];
    tdm_write_descriptor_set writes[TDM_MAX_BINDINGS];
    if (nbind > TDM_MAX_BINDINGS) {
        nbind = TDM_MAX_BINDINGS; // checked by the caller
    }
    for (uint32_t i = 0; i < nbind; i++) {
        infos[i].buffer = b[i].buffer;
        infos[i].offset = b[i].offset;
        infos[i].range = b[i].range;
        memset(&writes[i], 0, sizeof writes[i]);
        writes[i].sType = TDM_ST_WRITE_DESCRIPTOR_SET;
        writes[i].dstSet = set;
        writes[i].dstBinding = i;
        writes[i].descriptorCount = 1;
        writes[i].descriptorType = TDM_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        writes[i].pBufferInfo = &infos[i];
    }
    if (nbind > 0) {
        f->UpdateDescriptorSets(device, nbind, writes, 0, NULL);
    }
    if (bindPipeline) {
        f->CmdBindPipeline(cmd, TDM_BIND_POINT_COMPUTE, pipeline);
    }
    if (nbind > 0) {
        f->CmdBindDescriptorSets(cmd, TDM_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0, NULL);
    }
    if (pushSize > 0) {
        f->CmdPushConstants(cmd, layout, TDM_SHADER_STAGE_COMPUTE, 0, pushSize, push);
    }
    f->CmdDispatch(cmd, gx, gy, gz);
}

// tdm_barrier records a global memory barrier. kind 0: compute/transfer writes
// before compute/transfer reads and writes; kind 1: the same before host reads.
static void tdm_barrier(tdm_devfns *f, void *cmd, int kind) {
    tdm_memory_barrier mb;
    memset(&mb, 0, sizeof mb);
    mb.sType = TDM_ST_MEMORY_BARRIER;
    mb.srcAccessMask = TDM_ACCESS_SHADER_WRITE | TDM_ACCESS_TRANSFER_WRITE;
    uint32_t src = TDM_STAGE_COMPUTE_SHADER | TDM_STAGE_TRANSFER;
    uint32_t dst;
    if (kind == 1) {
        mb.dstAccessMask = TDM_ACCESS_HOST_READ;
        dst = TDM_STAGE_HOST;
    } else {
        mb.dstAccessMask = TDM_ACCESS_SHADER_READ | TDM_ACCESS_SHADER_WRITE | TDM_ACCESS_TRANSFER_READ |
                           TDM_ACCESS_TRANSFER_WRITE;
        dst = TDM_STAGE_COMPUTE_SHADER | TDM_STAGE_TRANSFER;
    }
    f->CmdPipelineBarrier(cmd, src, dst, 0, 1, &mb, 0, NULL, 0, NULL);
}

static void tdm_copy_buffer(tdm_devfns *f, void *cmd, uint64_t src, uint64_t dst, uint64_t srcOff, uint64_t dstOff,
                            uint64_t size) {
    tdm_buffer_copy r = {srcOff, dstOff, size};
    f->CmdCopyBuffer(cmd, src, dst, 1, &r);
}

static void tdm_fill_buffer(tdm_devfns *f, void *cmd, uint64_t dst, uint64_t off, uint64_t size, uint32_t data) {
    f->CmdFillBuffer(cmd, dst, off, size, data);
}

static void tdm_reset_queries(tdm_devfns *f, void *cmd, uint64_t pool, uint32_t first, uint32_t count) {
    f->CmdResetQueryPool(cmd, pool, first, count);
}

static void tdm_write_timestamp(tdm_devfns *f, void *cmd, uint64_t pool, uint32_t query) {
    f->CmdWriteTimestamp(cmd, TDM_STAGE_BOTTOM, pool, query);
}

static tdm_result tdm_query_results(tdm_devfns *f, void *device, uint64_t pool, uint32_t first, uint32_t count,
                                    uint64_t *out) {
    // VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT
    return f->GetQueryPoolResults(device, pool, first, count, (size_t)count * 8u, out, 8u, 0x1u | 0x2u);
}

// ---- submission -------------------------------------------------------------------

static tdm_result tdm_submit(tdm_devfns *f, void *queue, void *cmd, uint64_t fence) {
    tdm_submit_info si;
    memset(&si, 0, sizeof si);
    si.sType = TDM_ST_SUBMIT_INFO;
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    return f->QueueSubmit(queue, 1, &si, fence);
}

static tdm_result tdm_wait_fence(tdm_devfns *f, void *device, uint64_t fence, uint64_t timeout) {
    return f->WaitForFences(device, 1, &fence, 1, timeout);
}

static tdm_result tdm_reset_fence(tdm_devfns *f, void *device, uint64_t fence) {
    return f->ResetFences(device, 1, &fence);
}

static tdm_result tdm_fence_status(tdm_devfns *f, void *device, uint64_t fence) {
    return f->GetFenceStatus(device, fence);
}

static tdm_result tdm_reset_command_pool(tdm_devfns *f, void *device, uint64_t pool) {
    return f->ResetCommandPool(device, pool, 0);
}

#endif // TANDEM_VKRT_CAPI_H
