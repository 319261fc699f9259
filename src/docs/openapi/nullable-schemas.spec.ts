import { NULL_ONLY, nullableSchemas } from './nullable-schemas';

const REF = { $ref: '#/components/schemas/Judge' };

describe('nullableSchemas: a nullable property of the document admits null', () => {
  it('a nullable reference (allOf of one $ref) becomes oneOf the reference or null, annotations kept', () => {
    const doc = {
      components: {
        schemas: {
          LabelRecord: {
            type: 'object',
            properties: { judge: { nullable: true, type: 'object', description: 'Who', allOf: [REF] } },
          },
        },
      },
    };
    expect(nullableSchemas(doc).components.schemas.LabelRecord.properties.judge).toEqual({
      description: 'Who',
      oneOf: [REF, NULL_ONLY],
    });
  });

  it('a nullable enum lists null among its values', () => {
    const doc = { schema: { type: 'string', nullable: true, enum: ['positive', 'negative'] } };
    expect(nullableSchemas(doc).schema.enum).toEqual(['positive', 'negative', null]);
  });

  it('leaves alone what already admits null, and what is not nullable', () => {
    const doc = {
      a: { type: 'string', nullable: true },
      b: { type: 'object', allOf: [REF] },
      c: { type: 'string', enum: ['x'] },
      d: { ...NULL_ONLY },
    };
    expect(nullableSchemas(structuredClone(doc))).toEqual(doc);
  });
});
