/*
 * object_basics: define a class, make objects, keep them in a list, share
 * one with a second owner, and let reference counting free everything.
 *
 *   cc object_basics.c $(pkg-config --cflags --libs opal)
 */
#include <stdio.h>
#include <string.h>

#include <opal/class/opal_list.h>
#include <opal/class/opal_object.h>

/* A job: a list item (so it can sit in an opal_list_t) with a name. */
typedef struct {
    opal_list_item_t super;
    char name[32];
    int priority;
} job_t;

static void job_construct(job_t *job)
{
    job->name[0] = '\0';
    job->priority = 0;
}

static void job_destruct(job_t *job)
{
    printf("  freeing job %s\n", job->name);
}

OBJ_CLASS_INSTANCE(job_t, opal_list_item_t, job_construct, job_destruct);

static int by_priority(opal_list_item_t **a, opal_list_item_t **b)
{
    return ((job_t *) *b)->priority - ((job_t *) *a)->priority;
}

int main(void)
{
    static const struct {
        const char *name;
        int priority;
    } specs[] = {{"compile", 2}, {"link", 1}, {"test", 3}, {"install", 0}};

    opal_list_t queue;
    OBJ_CONSTRUCT(&queue, opal_list_t);
    for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); ++i) {
        job_t *job = OBJ_NEW(job_t);
        if (NULL == job) {
            return 1;
        }
        snprintf(job->name, sizeof(job->name), "%s", specs[i].name);
        job->priority = specs[i].priority;
        opal_list_append(&queue, &job->super);
    }

    opal_list_sort(&queue, by_priority);
    printf("jobs by priority:\n");
    job_t *job;
    OPAL_LIST_FOREACH(job, &queue, job_t) {
        printf("  %-8s priority %d\n", job->name, job->priority);
    }

    /* A second owner keeps the first job alive after the queue lets go. */
    job_t *kept = (job_t *) opal_list_get_first(&queue);
    OBJ_RETAIN(kept);

    printf("releasing the queue:\n");
    OPAL_LIST_DESTRUCT(&queue);
    printf("still holding %s (references: %d)\n", kept->name, (int) OBJ_REFCOUNT(kept));
    OBJ_RELEASE(kept);
    return NULL == kept ? 0 : 1;
}
